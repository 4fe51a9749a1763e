package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/bridge/upstream"
)

// The lead's side of watching a teammate (docs/teammates.md): each
// _acpmux/teammate/update a teammate sends becomes a session/update of the
// session "teammate:NAME/SESSION", kept in that session's replay log and
// sent to its hosts (those that joined it with session/attach). The
// session is read-only: a host's session/prompt or other request naming
// it is refused, unless Options.AllowTeammatePrompts, in which case
// session/prompt and session/cancel go to the teammate.

// relayCall is a lead host's request forwarded to a teammate: the host
// and its id, restored on the teammate's response.
type relayCall struct {
	host *Host
	id   []byte
}

// teammateUpdate records and fans out one update of teammate host h.
func (b *Bridge) teammateUpdate(h *Host, params []byte) {
	name := b.teammateOf(h)
	m, err := acp.DecodeObject(params, []string{"teammate", "sessionId", "update"}, true)
	var u upstream.Update
	if err == nil {
		err = json.Unmarshal(params, &u)
	}
	if err != nil || name == "" || u.Teammate != name || u.SessionID == "" || len(m["update"]) == 0 || m["update"][0] != '{' {
		b.log.Warn("teammate update refused", "host", h.ID, "teammate", name, "named", u.Teammate, "err", err)
		return
	}
	sid := upstream.SessionName(name, u.SessionID)
	sb, _ := json.Marshal(sid)
	msg := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(sb) + `,"update":` + string(m["update"]) + `}}`)
	env, err := acp.Parse(msg)
	if err != nil {
		b.log.Warn("teammate update refused", "host", h.ID, "teammate", name, "err", err)
		return
	}
	b.mu.Lock()
	s := b.teammateSessionLocked(sid, name)
	if s == nil {
		b.mu.Unlock()
		return
	}
	s.replay.appendUpdate(msg, &env.Update)
	hosts := s.hosts
	b.mu.Unlock()
	// On the teammate host's one reader goroutine: in order.
	for _, x := range hosts {
		x.send(msg)
	}
}

// teammateSessionLocked returns the session sid of teammate name's
// transcript, created if need be, or nil when the lead's own agent has a
// session of that name. b.mu is held.
func (b *Bridge) teammateSessionLocked(sid, name string) *session {
	s := b.sessions[sid]
	if s == nil {
		s = &session{id: sid, teammate: name, replay: newReplayLog(b.opts.ReplayMaxBytes)}
		b.sessions[sid] = s
	}
	if s.teammate != name {
		return nil
	}
	return s
}

// teammateSession returns the teammate session named by the sessionId
// of params and the teammate it belongs to, or "" when params names none.
func (b *Bridge) teammateSession(params []byte) (sid, name string) {
	sid = acp.MemberString(params, "sessionId")
	name, ok := teammateOfSession(sid)
	if !ok {
		return "", ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[sid]; s != nil && s.teammate == "" {
		return "", "" // the lead's own agent's session
	}
	return sid, name
}

// teammateSessionRequest handles host h's request when it names a
// teammate session, and reports whether it did: session/prompt goes to
// the teammate with Options.AllowTeammatePrompts, everything else is
// refused (-32600), and never reaches the lead's agent.
func (b *Bridge) teammateSessionRequest(h *Host, id []byte, method string, params []byte) bool {
	sid, name := b.teammateSession(params)
	if sid == "" {
		return false
	}
	if b.teammateOf(h) != "" {
		b.log.Warn("a teammate connection named a teammate's session; refused", "host", h.ID, "session", sid, "method", method)
		b.replyError(h, id, fmt.Errorf("%w: a teammate connection cannot use a teammate's session", acp.ErrInvalidRequest))
		return true
	}
	if method == MethodSessionAttach {
		return false // watching: the lead's hosts may
	}
	if method != acp.MethodSessionPrompt || !b.opts.AllowTeammatePrompts {
		b.log.Info("request to a teammate's session refused", "host", h.ID, "session", sid, "method", method)
		b.replyError(h, id, fmt.Errorf("%w: session %s is teammate %s's, shown read-only (a lead started with --allow-teammate-prompts forwards session/prompt and session/cancel)", acp.ErrInvalidRequest, sid, name))
		return true
	}
	b.mu.Lock()
	th := b.teammates[name]
	b.mu.Unlock()
	if th == nil {
		b.replyError(h, id, fmt.Errorf("%w: teammate %s is not connected", acp.ErrNoHost, name))
		return true
	}
	_, tsid, _ := cutTeammate(sid)
	ts, _ := json.Marshal(tsid)
	// The host's prompt goes on byte for byte.
	msg := []byte(`{"jsonrpc":"2.0","id":0,"method":"` + upstream.MethodPrompt + `","params":{"sessionId":` + string(ts) +
		`,"prompt":` + string(orNull(acp.MemberBytes(params, "prompt"))) + `}}`)
	env, err := acp.Parse(msg)
	if err != nil {
		b.replyError(h, id, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err))
		return true
	}
	hid, hkey := th.mintID()
	th.mu.Lock()
	th.outgoing[hkey] = &outCall{method: method, relay: &relayCall{host: h, id: append([]byte(nil), id...)}}
	th.mu.Unlock()
	b.log.Info("host prompts a teammate's session", "host", h.ID, "session", sid)
	if !th.send(acp.WithID(msg, env.ID, hid)) {
		th.mu.Lock()
		delete(th.outgoing, hkey)
		th.mu.Unlock()
		b.replyError(h, id, fmt.Errorf("%w: teammate %s is not connected", acp.ErrNoHost, name))
	}
	return true
}

// teammateSessionCancel handles host h's notification when it names a
// teammate session, and reports whether it did: session/cancel goes to
// the teammate with Options.AllowTeammatePrompts; the rest is dropped.
func (b *Bridge) teammateSessionCancel(h *Host, method string, params []byte) bool {
	sid, name := b.teammateSession(params)
	if sid == "" {
		return false
	}
	b.mu.Lock()
	th := b.teammates[name]
	b.mu.Unlock()
	if method != acp.MethodSessionCancel || !b.opts.AllowTeammatePrompts || th == nil || b.teammateOf(h) != "" {
		b.log.Info("notification to a teammate's session dropped", "host", h.ID, "session", sid, "method", method)
		return true
	}
	_, tsid, _ := cutTeammate(sid)
	p, _ := json.Marshal(upstream.Cancel{SessionID: tsid})
	th.send(notification(upstream.MethodCancel, string(p)))
	return true
}

// cutTeammate splits "teammate:NAME/SESSION".
func cutTeammate(sid string) (name, session string, ok bool) {
	name, ok = teammateOfSession(sid)
	if !ok {
		return "", "", false
	}
	return name, sid[len("teammate:")+len(name)+1:], true
}

func orNull(b []byte) []byte {
	if len(b) == 0 {
		return []byte("null")
	}
	return b
}
