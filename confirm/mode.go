package confirm

import (
	"context"
	"fmt"
	"sync"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
)

// gateState is the broker's plan-mode and policy state. Its mutex is taken after
// Broker.mu when both are needed, never the other way round.
type gateState struct {
	mu        sync.Mutex // guards the fields below
	sessions  map[string]*gateSession
	policy    *policy.Policy
	policyRev uint64
	always    map[string]store.Rule // remembered ALWAYS verdicts by key
	loaded    bool                  // always was read from the store
	items     []gate.PlanItem       // audit rows when there is no store (bounded)
}

// gateSession is the gate state of one session. Guarded by gate.mu.
type gateSession struct {
	mode     gate.Mode
	revision uint64
	remember map[string]policy.Decision // SESSION verdicts by key
	breaker  breakerState
}

// gateSession returns the gate state of session id, creating it in
// Options.Mode. g.mu must be held.
func (b *Broker) gateSessionLocked(id string) *gateSession {
	gs := b.g.sessions[id]
	if gs == nil {
		m := b.opts.Mode
		if m == "" {
			m = gate.ModeDefault
		}
		gs = &gateSession{mode: m, remember: map[string]policy.Decision{}}
		b.g.sessions[id] = gs
	}
	return gs
}

// GateMode returns the gate mode of session sessionID and its revision,
// which starts at 0 and increases on every change. Safe for concurrent use.
func (b *Broker) GateMode(sessionID string) (gate.Mode, uint64) {
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	gs := b.gateSessionLocked(sessionID)
	return gs.mode, gs.revision
}

// SetMode sets the gate mode of session sessionID to m because of by (a
// human act: a host's session/set_mode, or a human's approval of a
// switch_mode request), journalled in the log and the store. When the mode
// changes, its revision increases and every open decision of the session
// fails closed as stale (an approval given under the old mode must not
// run). It returns the new revision; [gate.ErrModeLocked] when Options.LockMode is
// set and m differs from the current mode.
func (b *Broker) SetMode(sessionID string, m gate.Mode, by string) (uint64, error) {
	if _, err := gate.ParseMode(string(m)); err != nil {
		return 0, err
	}
	b.g.mu.Lock()
	gs := b.gateSessionLocked(sessionID)
	if gs.mode == m {
		rev := gs.revision
		b.g.mu.Unlock()
		return rev, nil
	}
	if b.opts.LockMode {
		cur := gs.mode
		b.g.mu.Unlock()
		b.log.Warn("confirm: gate mode change refused: the mode is locked", "session", sessionID, "mode", cur, "wanted", m, "by", by)
		return 0, gate.ErrModeLocked
	}
	gs.mode = m
	gs.revision++
	rev := gs.revision
	b.g.mu.Unlock()
	b.log.Info("confirm: gate mode changed", "session", sessionID, "mode", m, "revision", rev, "by", by)
	if b.store != nil {
		ev := store.ModeEvent{SessionID: sessionID, At: b.now().UTC(), Mode: string(m), Revision: rev, By: by}
		if err := b.store.InsertModeEvent(context.Background(), ev); err != nil {
			b.log.Warn("confirm: cannot store gate mode change", "session", sessionID, "err", err)
		}
	}
	b.staleSession(sessionID, fmt.Sprintf("gate mode changed to %s (revision %d) by %s", m, rev, by))
	b.tellModeChanged(sessionID, m)
	return rev, nil
}

// EngagePlan engages plan mode for session sessionID because the agent
// itself reported its plan mode (current_mode_update, or the mode of a new
// session). The agent can engage the gate but never leave it: only SetMode
// leaves. It reports whether the mode changed. A locked gate is not changed.
func (b *Broker) EngagePlan(sessionID, by string) bool {
	b.g.mu.Lock()
	gs := b.gateSessionLocked(sessionID)
	mode := gs.mode
	b.g.mu.Unlock()
	if mode == gate.ModePlan || b.opts.LockMode {
		return false
	}
	_, err := b.SetMode(sessionID, gate.ModePlan, by)
	return err == nil
}

// PromptStarted reports that a host sent session/prompt for sessionID: a
// tripped circuit breaker of the session clears. Its counts are kept: the
// breaker counts denials within the session, across prompt turns, and only
// an approval resets the consecutive count (docs/policy.md, "Circuit
// breaker").
func (b *Broker) PromptStarted(sessionID string) {
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	b.gateSessionLocked(sessionID).breaker.tripped = false
}

// staleSession fails every open decision of sessionID closed as stale.
func (b *Broker) staleSession(sessionID, why string) {
	for _, d := range b.openDecisions(sessionID) {
		b.close(d, store.StatusCancelled, store.ReasonStale, "stale: "+why)
	}
}
