package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/gate"
)

// MethodBlocked is acpmux's notification telling every host of a session
// that the gate refused a permission request without asking anyone (plan
// mode blocked it, or a policy rule denied it): params are a
// [gate.Blocked] (docs/protocol.md). Hosts that do not know it ignore
// it, as ACP requires for unknown extension notifications.
const MethodBlocked = "_acpmux/blocked"

// noteHostCapabilities records what host h's initialize request advertised:
// clientCapabilities.session.notices (an object) means h presents
// session/update "notice" updates (ACP RFD "Session Notices").
func noteHostCapabilities(h *Host, params []byte) {
	n := acp.MemberBytes(acp.MemberBytes(acp.MemberBytes(params, "clientCapabilities"), "session"), "notices")
	h.notices.Store(len(n) > 0 && n[0] == '{')
}

// Blocked implements [confirm.BlockedSessions]: every host of the session
// gets the _acpmux/blocked notification, and a host that advertised
// notices also a session/update "notice" with the same facts. Neither goes
// into the replay log: they are live events, as ACP's notices are.
func (b *Bridge) Blocked(bl gate.Blocked) {
	params, err := json.Marshal(bl)
	if err != nil {
		return // plain strings: cannot fail
	}
	ext := notification(MethodBlocked, string(params))
	var notice []byte
	b.mu.Lock()
	var hosts []*Host
	if s := b.sessions[bl.SessionID]; s != nil {
		hosts = s.hosts
	}
	b.mu.Unlock()
	for _, h := range hosts {
		h.send(ext)
		if h.notices.Load() {
			if notice == nil {
				notice = blockedNotice(bl)
			}
			h.send(notice)
		}
	}
	what := "command"
	if bl.FromTitle {
		what = "title" // no shell command: Command holds the title
	}
	b.log.Info("gate refused a permission request", "session", bl.SessionID, "decision", bl.DecisionID,
		"route", bl.Route, "rule", bl.Rule, "class", bl.Class, what, clip(bl.Command, 200))
}

// clip returns s cut to n bytes, with its length noted when it was cut;
// the log handler quotes and escapes it.
func clip(s string, n int) string {
	if len(s) > n {
		return fmt.Sprintf("%s... (%d bytes)", s[:n], len(s))
	}
	return s
}

// blockedNotice is the session/update "notice" of bl.
func blockedNotice(bl gate.Blocked) []byte {
	title := "acpmux blocked a tool call in plan mode"
	if bl.Route == gate.RouteDeny {
		title = "acpmux policy denied a tool call"
	}
	desc := bl.Command
	if bl.Class != "" {
		desc += " (" + bl.Class + ")"
	}
	desc += fmt.Sprintf(": %s [%s]", bl.Message, bl.Rule)
	u, _ := json.Marshal(map[string]any{"sessionId": bl.SessionID, "update": map[string]any{
		"sessionUpdate": "notice", "severity": "warning", "title": title, "description": desc}})
	return notification(acp.MethodSessionUpdate, string(u))
}
