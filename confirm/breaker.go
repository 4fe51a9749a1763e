package confirm

import (
	"fmt"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/store"
	"time"
)

// Defaults of the circuit breaker on repeated denials: 5 consecutive
// denials, or 10 within 2 minutes, in a session (docs/policy.md).
const (
	DefaultBreakerConsecutive = 5
	DefaultBreakerWindowMax   = 10
	DefaultBreakerWindow      = 2 * time.Minute
)

// Breaker configures the circuit breaker. Zero fields take the defaults; a
// negative count turns that trigger off.
type Breaker struct {
	Consecutive int           // denials in a row that trip it
	WindowMax   int           // denials within Window that trip it
	Window      time.Duration // the sliding window
}

func (c Breaker) withDefaults() Breaker {
	if c.Consecutive == 0 {
		c.Consecutive = DefaultBreakerConsecutive
	}
	if c.WindowMax == 0 {
		c.WindowMax = DefaultBreakerWindowMax
	}
	if c.Window <= 0 {
		c.Window = DefaultBreakerWindow
	}
	return c
}

// breakerState counts one session's denials across its prompt turns: the
// consecutive count is reset only by an approval, the window only slides.
// tripped holds from the trip to the next prompt from a host
// (PromptStarted). Guarded by gate.mu.
type breakerState struct {
	consecutive int
	times       []time.Time
	tripped     bool
}

// countOutcome feeds one closed decision of sessionID into the breaker:
// denied is whether the agent got no approval. When it trips, the turn is
// cancelled through [Sessions.CancelTurn]. Closings that ended the turn
// anyway (session/cancel, agent exit) are not counted.
func (b *Broker) countOutcome(sessionID string, denied bool, reason store.Reason) {
	sess := b.bridge()
	if sess == nil || turnEnded[reason] || reason == store.ReasonBreaker {
		return
	}
	cfg := b.opts.Breaker.withDefaults()
	now := b.now()
	b.g.mu.Lock()
	st := &b.gateSessionLocked(sessionID).breaker
	if st.tripped {
		b.g.mu.Unlock()
		return
	}
	if !denied {
		st.consecutive = 0
		b.g.mu.Unlock()
		return
	}
	st.consecutive++
	keep := st.times[:0]
	for _, t := range st.times {
		if now.Sub(t) < cfg.Window {
			keep = append(keep, t)
		}
	}
	st.times = append(keep, now)
	var why string
	switch {
	case cfg.Consecutive > 0 && st.consecutive >= cfg.Consecutive:
		why = fmt.Sprintf("%d consecutive denials", st.consecutive)
	case cfg.WindowMax > 0 && len(st.times) >= cfg.WindowMax:
		why = fmt.Sprintf("%d denials within %v", len(st.times), cfg.Window)
	}
	st.tripped = why != ""
	b.g.mu.Unlock()
	if why == "" {
		return
	}
	b.log.Warn("confirm: circuit breaker tripped; cancelling the prompt turn", "session", sessionID, "why", why)
	sess.CancelTurn(sessionID, "acpmux circuit breaker: "+why+". "+gate.BreakerNotice)
}
