package bridge

import (
	"context"
	"encoding/json"

	"github.com/acpmux/acpmux/acp"
)

// PermissionRouter decides the agent's session/request_permission requests
// (the confirmation broker). The bridge calls Ask on a goroutine of its own
// per request and answers the agent with what Ask returns; the other
// methods report events it sees. Implementations must be safe for
// concurrent use.
type PermissionRouter interface {
	// Ask decides one request and returns the raw JSON result the bridge
	// sends to the agent, or an error the bridge turns into a JSON-RPC
	// error response (acp.AsError). It blocks until decided.
	Ask(ctx context.Context, req PermissionRequest) (json.RawMessage, error)
	// HostAnswered reports host h's response (result or error object, raw)
	// to its copy of decision.
	HostAnswered(h *Host, decision string, result, errObj []byte)
	// HostLeft reports that h disconnected while decision was presented to it.
	HostLeft(h *Host, decision string)
	// HostAbstained reports that h's response to its copy of decision was
	// not a valid JSON-RPC response (reason says why): not an answer, h
	// abstains and the decision stays open for the other hosts.
	HostAbstained(h *Host, decision, reason string)
	// CancelSession closes every open decision of session sid as cancelled.
	CancelSession(sid, reason string)
	// CancelRequest closes the decision for the agent request agentKey
	// (PermissionRequest.AgentKey) because the agent cancelled it; it
	// reports whether such a decision was open.
	CancelRequest(agentKey string) bool
	// ToolCallUpdate reports a tool_call or tool_call_update session update.
	ToolCallUpdate(sid string, update []byte)
	// SessionStarted reports a session created, loaded or resumed by a host,
	// with the working directory the host gave.
	SessionStarted(sid, cwd string)
	// HostAttached reports that h attached to session sid; the router
	// presents it the session's still-open decisions.
	HostAttached(sid string, h *Host)
	// AgentExited closes every open decision: the agent is gone.
	AgentExited()
	// Stopping closes every open decision because acpmux is shutting
	// down (the IDE left, or a signal): no answer could reach the agent.
	Stopping(reason string)
}

// PermissionRequest is one session/request_permission from the agent.
type PermissionRequest struct {
	// SessionID is params.sessionId.
	SessionID string
	// AgentKey identifies this request among all the agent has sent: an
	// occurrence number and acp.IDKey of its id (an agent may reuse an id
	// once it was answered; each use is a new request).
	AgentKey string
	// Params is the raw params, never re-encoded.
	Params json.RawMessage
	// Cwd is the session's working directory as the host gave it.
	Cwd string
	// Hosts are the hosts of the session when the request arrived, owner first.
	Hosts []*Host
	// UnknownSession is set when no host created, loaded, resumed or
	// attached to SessionID: the router then fails closed without opening a
	// decision or asking anyone (Hosts is empty).
	UnknownSession bool
}

// askPermission runs one permission request through the router and answers
// the agent.
func (b *Bridge) askPermission(msg []byte, env acp.Envelope, agentID []byte, occ, sid string) {
	b.mu.Lock()
	var hosts []*Host
	var cwd string
	s := b.sessions[sid]
	if s != nil {
		cwd = s.cwd
		if s.owner != nil {
			hosts = append(hosts, s.owner)
		}
		for _, h := range s.hosts {
			if h != s.owner {
				hosts = append(hosts, h)
			}
		}
	}
	b.mu.Unlock()
	req := PermissionRequest{
		SessionID:      sid,
		AgentKey:       occ,
		Params:         append(json.RawMessage(nil), env.Params.Bytes(msg)...),
		Cwd:            cwd,
		Hosts:          hosts,
		UnknownSession: s == nil,
	}
	result, err := b.opts.Permissions.Ask(context.Background(), req)
	if err != nil {
		b.replyAgentError(agentID, err)
		return
	}
	b.answerAgent(agentID, resultMessage(agentID, result))
}

// MethodPermissionResolved is acpmux's notification telling a host that a
// permission request it was shown is closed: params
// {"sessionId", "decisionId", "toolCallId", "status", "optionId"?,
// "resolvedBy"?, "reason"?}. See docs/protocol.md.
const MethodPermissionResolved = "_acpmux/permission_resolved"

// permissions returns the router, or one that does nothing.
func (b *Bridge) permissions() PermissionRouter {
	if b.opts.Permissions != nil {
		return b.opts.Permissions
	}
	return noRouter{}
}

type noRouter struct{}

func (noRouter) Ask(context.Context, PermissionRequest) (json.RawMessage, error) {
	return nil, acp.ErrInternal
}
func (noRouter) HostAnswered(*Host, string, []byte, []byte) {}
func (noRouter) HostLeft(*Host, string)                     {}
func (noRouter) HostAbstained(*Host, string, string)        {}
func (noRouter) CancelSession(string, string)               {}
func (noRouter) CancelRequest(string) bool                  { return false }
func (noRouter) ToolCallUpdate(string, []byte)              {}
func (noRouter) SessionStarted(string, string)              {}
func (noRouter) HostAttached(string, *Host)                 {}
func (noRouter) AgentExited()                               {}
func (noRouter) Stopping(string)                            {}
