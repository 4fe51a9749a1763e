package bridge

import (
	"fmt"
	"strings"

	"github.com/acpmux/acpmux/acp"
)

// ReservedPrefix is acpmux's own method namespace. Only acpmux sends
// methods under it (MethodPermissionResolved, MethodTurnCancelled, ...); a
// message from the agent with such a method is never forwarded or acted
// on, and an agent request under it gets -32601 (method not found). See
// docs/protocol.md.
const ReservedPrefix = "_acpmux/"

// maxLoggedReserved bounds the set of reserved methods logged once each, so
// an agent inventing names cannot grow it.
const maxLoggedReserved = 64

// agentReserved drops a message of the agent's in acpmux's own namespace,
// answering a request with -32601 so the agent does not wait for it.
func (b *Bridge) agentReserved(msg []byte, env acp.Envelope) {
	b.stats.dropped.Add(1)
	if b.reservedLogged == nil {
		b.reservedLogged = map[string]bool{}
	}
	if !b.reservedLogged[env.Method] && len(b.reservedLogged) < maxLoggedReserved {
		b.reservedLogged[env.Method] = true
		b.log.Warn("agent sent a message in acpmux's own _acpmux/ namespace; dropped (logged once per method)", "method", env.Method, "kind", env.Kind)
	}
	if env.Kind == acp.KindRequest {
		b.toAgent(errorMessage(env.ID.Bytes(msg), fmt.Errorf("%w: %s is reserved for acpmux", acp.ErrMethodNotFound, env.Method)))
	}
}

// isReserved reports whether method is in acpmux's own namespace.
func isReserved(method string) bool { return strings.HasPrefix(method, ReservedPrefix) }

// stripAgentMeta removes every "acpmux" member of a "_meta" object, at any
// depth, from the params (or the result) of a message of the agent (only
// acpmux writes _meta.acpmux, and hosts trust what they find there),
// cutting just those bytes; msg comes back unchanged when there is none.
// A nil msg means the message could not be read again and is dropped.
func (b *Bridge) stripAgentMeta(msg []byte, env acp.Envelope) ([]byte, acp.Envelope) {
	span := env.Params
	if !span.Present() {
		span = env.Result
	}
	body := span.Bytes(msg)
	if body == nil || !env.MetaNames {
		return msg, env
	}
	stripped, n := acp.DeleteMetaMembers(body, "acpmux")
	if n == 0 {
		return msg, env
	}
	if !b.metaLogged {
		b.metaLogged = true
		b.log.Warn("agent put _meta.acpmux in a message; removed before forwarding (logged once)", "method", env.Method, "members", n)
	}
	out := acp.WithID(msg, span, stripped)
	// Parse again: every span after the cut moved. Removing members
	// keeps the message valid, so this cannot fail; if it did, the
	// notification is dropped rather than forwarded unstripped.
	renv, err := acp.Parse(out)
	if err != nil {
		b.log.Error("agent message invalid after removing _meta.acpmux; dropped", "err", err)
		return nil, acp.Envelope{}
	}
	return out, renv
}
