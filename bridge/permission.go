package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
)

// The bridge's side of the seam with the broker ([Options.Broker]). One
// permission request has one key from end to end: its decision id
// ([confirm.DecisionID] of the session and the agent key the bridge mints),
// which the bridge keeps while it asks (b.asked), puts on each host's copy
// (outCall.decision) and hands back with every answer. Without a broker
// nothing here runs: each request goes to the session's owning host.

// askPermission runs one permission request through the broker and answers
// the agent with what the broker returns.
func (b *Bridge) askPermission(msg []byte, env acp.Envelope, agentID []byte, occ, sid string) {
	params := append(json.RawMessage(nil), env.Params.Bytes(msg)...)
	req := confirm.Request{SessionID: sid, AgentKey: b.epoch + "/" + occ, Params: params}
	did := confirm.DecisionID(sid, req.AgentKey)
	b.permMu.Lock()
	b.asked[occ] = did
	b.permMu.Unlock()
	defer func() {
		b.permMu.Lock()
		delete(b.asked, occ)
		b.permMu.Unlock()
	}()
	result, err := b.decide(req)
	if err != nil {
		b.replyAgentError(agentID, err)
		return
	}
	b.answerAgent(agentID, resultMessage(agentID, result))
}

// refuseUnknownSession answers a permission request for a session that no
// host created or attached to with its reject option, opening no
// decision, and logs it (the first, then at most one line a second with
// the count since).
func (b *Bridge) refuseUnknownSession(msg []byte, env acp.Envelope, agentID []byte, occ, sid string) {
	req := confirm.Request{SessionID: sid, AgentKey: b.epoch + "/" + occ, Params: env.Params.Bytes(msg)}
	result, err := b.decide(req)
	if err != nil {
		b.replyAgentError(agentID, err)
		return
	}
	b.unknownRefused++
	if now := time.Now(); now.Sub(b.unknownLogged) >= time.Second {
		b.log.Warn("permission request for a session no host created or attached to; refused without asking (its reject option)",
			"session", sid, "refused_since_last_line", b.unknownRefused)
		b.unknownLogged, b.unknownRefused = now, 0
	}
	b.answerAgent(agentID, resultMessage(agentID, result))
}

// decide asks the broker about req: the session's hosts (owner first) and
// the extra presenters are shown it, or an unknown session's request is
// refused without asking anyone.
func (b *Bridge) decide(req confirm.Request) (json.RawMessage, error) {
	if k := acp.DuplicateKey(req.Params); k != "" {
		// acpmux, the hosts and the page would not all read the same
		// request (JSON parsers keep different copies of a duplicate).
		return nil, fmt.Errorf("%w: session/request_permission params have a duplicate member %q", acp.ErrInvalidParams, k)
	}
	hosts, cwd, known := b.sessionHosts(req.SessionID)
	if !known {
		return b.broker.RefuseUnknownSession(req)
	}
	req.Cwd = cwd
	presenters := make([]confirm.Presenter, 0, len(hosts)+len(b.opts.Presenters))
	for _, h := range hosts {
		if !h.Driver && h.mayAnswer() {
			presenters = append(presenters, hostPresenter{h})
		}
	}
	presenters = append(presenters, b.opts.Presenters...)
	if len(hosts) > 0 {
		req.Producer = hosts[0].ID
	}
	req.Requester = b.turns.of(req.SessionID)
	return b.broker.Ask(context.Background(), req, presenters)
}

// sessionHosts returns the hosts of session sid, owner first, its working
// directory, and whether a host created, loaded, resumed or attached to it.
func (b *Bridge) sessionHosts(sid string) (hosts []*Host, cwd string, known bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sessions[sid]
	if s == nil {
		return nil, "", false
	}
	if s.owner != nil {
		hosts = append(hosts, s.owner)
	}
	for _, h := range s.hosts {
		if h != s.owner {
			hosts = append(hosts, h)
		}
	}
	return hosts, s.cwd, true
}

// cancelAsked cancels the decision of the agent request occ, if the bridge
// is asking the broker about it; it reports whether one was open.
func (b *Bridge) cancelAsked(occ string) bool {
	if b.broker == nil {
		return false
	}
	b.permMu.Lock()
	did, ok := b.asked[occ]
	b.permMu.Unlock()
	return ok && b.broker.CancelRequest(did)
}

// hostAnswered hands host h's response to its copy of decision to the
// broker: a result is checked strictly; an error response counts as the
// host abstaining.
func (b *Bridge) hostAnswered(h *Host, decision string, result, errObj []byte) {
	if result == nil {
		b.broker.Abstain(decision, h.ID, "error response: "+string(errObj))
		return
	}
	if err := b.broker.AnswerResult(h.personContext(), decision, h.ID, result); err != nil {
		b.log.Warn("host answer not accepted", "host", h.ID, "decision", decision, "err", err)
	}
}

// sessionStarted tells the broker of a session a host created, loaded or
// resumed, with the working directory the host gave.
func (b *Bridge) sessionStarted(sid, cwd string) {
	if b.broker != nil {
		b.broker.TrackSession(sid, cwd)
	}
	if b.opts.OnSession != nil {
		b.opts.OnSession(sid, cwd)
	}
}

// cancelDecisions closes every open decision of session sid as cancelled.
func (b *Bridge) cancelDecisions(sid, reason string) {
	if b.broker != nil {
		b.broker.CancelSession(sid, reason)
	}
}

// stopDecisions cancels every open decision of every session because
// acpmux is shutting down (the agent gets "cancelled"), so that no answer
// is journalled as delivered to an agent that is being stopped.
func (b *Bridge) stopDecisions(reason string) {
	if b.broker == nil {
		return
	}
	for _, s := range b.broker.Sessions() {
		b.broker.CancelSession(s.SessionID, reason)
	}
}
