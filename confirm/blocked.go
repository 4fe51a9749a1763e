package confirm

import "github.com/acpmux/acpmux/confirm/gate"

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
		bl.Command, bl.FromTitle = d.snap.Title, true
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
