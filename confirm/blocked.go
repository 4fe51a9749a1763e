package confirm

import "github.com/acpmux/acpmux/confirm/gate"

// Blocked describes a permission request the gate refused without asking
// any host: plan mode blocked it (RoutePlanBlock) or a policy rule denied
// it (RouteDeny). See docs/plan-mode.md, "What the hosts see".
type Blocked struct {
	SessionID  string `json:"sessionId"`
	DecisionID string `json:"decisionId"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Command is the shell command, or the tool call's title when there
	// is none.
	Command string `json:"command"`
	// Class is the classifier's class of Command ("read-only", "write",
	// "unknown"), "" when it is not a shell command.
	Class string `json:"class,omitempty"`
	// Route is RoutePlanBlock or RouteDeny; Mode the gate mode then.
	Route gate.Route `json:"route"`
	Mode  gate.Mode  `json:"mode"`
	// Rule is what decided: rule:NAME, builtin:..., a remembered verdict.
	Rule string `json:"rule"`
	// Message is the fixed message the agent was given.
	Message string `json:"message,omitempty"`
}

// BlockedSessions is implemented by a [Sessions] (given to
// [Broker.UseSessions]) that tells the session's hosts of each request the
// gate blocked. Blocked is called once per such decision, after it closed,
// without the broker's locks; it must not block.
type BlockedSessions interface {
	Blocked(b gate.Blocked)
}

// ModeSessions is implemented by a [Sessions] that wants to know when the
// gate mode of a session changes (to tell the agent, docs/plan-mode.md).
// GateModeChanged is called after each change, without the broker's locks;
// it must not block.
type ModeSessions interface {
	GateModeChanged(sessionID string, m gate.Mode)
}

// tellBlocked hands d to the sessions' Blocked when the gate refused it.
func (b *Broker) tellBlocked(d *Decision) {
	g := d.snap.Gate
	if g == nil || (g.Route != gate.RoutePlanBlock && g.Route != gate.RouteDeny) {
		return
	}
	bs, ok := b.bridge().(BlockedSessions)
	if !ok {
		return
	}
	bl := gate.Blocked{SessionID: d.snap.SessionID, DecisionID: d.id, ToolCallID: d.snap.ToolCall.ToolCallID,
		Command: d.snap.Command, Route: g.Route, Mode: g.Mode, Rule: g.DecidedBy, Message: g.Message}
	if bl.Command == "" {
		bl.Command = d.snap.Title
	} else if d.snap.Classification != nil {
		bl.Class = d.snap.Classification.Class
	}
	bs.Blocked(bl)
}

// tellModeChanged tells the sessions' GateModeChanged of a change.
func (b *Broker) tellModeChanged(sessionID string, m gate.Mode) {
	if ms, ok := b.bridge().(ModeSessions); ok {
		ms.GateModeChanged(sessionID, m)
	}
}
