package confirm_test

import (
	"fmt"
	"github.com/acpmux/acpmux/confirm/gate"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// breakerRig is a broker with a deny rule for "rm *" and an allow rule for
// "ls*" whose CancelTurn calls are recorded.
type breakerRig struct {
	t       *testing.T
	b       *confirm.Broker
	mu      sync.Mutex // guards cancels
	cancels []string
	n       int // requests sent
}

func newBreakerRig(t *testing.T, cfg confirm.Breaker) *breakerRig {
	r := &breakerRig{t: t}
	pol := mustPolicy(t, "[[rule]]\nname='no-rm'\ndecision='deny'\ncommand='rm *'\n[[rule]]\nname='ok-ls'\ndecision='allow'\ncommand='ls*'")
	r.b = newBroker(t, confirm.Options{Classify: classifyCmd, Policy: pol, Breaker: cfg})
	r.b.UseSessions(turnCanceller(func(sid, reason string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.cancels = append(r.cancels, reason)
	}))
	return r
}

// turn is one prompt turn from a host with one permission request for
// command; it returns the optionId the agent got and its message.
func (r *breakerRig) turn(command string) (string, string) {
	r.b.PromptStarted("s")
	r.n++
	return outcome(r.t, await(r.t, ask(r.b, toolReq("s", fmt.Sprint(r.n), "execute", command), newHost("ide"))).result)
}

func (r *breakerRig) cancelled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.cancels...)
}

// TestBreakerCountsDenialsAcrossTurns: with the default thresholds, six
// one-request prompt turns each denied trip the circuit breaker (at the
// fifth: five consecutive denials); the counts span turns, only an
// approval resets the consecutive count, and a new prompt clears a trip
// but not the count.
func TestBreakerCountsDenialsAcrossTurns(t *testing.T) {
	r := newBreakerRig(t, confirm.Breaker{})
	for i := 1; i <= 6; i++ {
		if opt, _ := r.turn("rm x"); opt != "reject-once" {
			t.Fatalf("turn %d: %s, want denied", i, opt)
		}
		if got := len(r.cancelled()); i == 4 && got != 0 {
			t.Fatalf("tripped after %d denials: %q", i, r.cancelled())
		}
	}
	c := r.cancelled()
	if len(c) == 0 || !strings.Contains(c[0], fmt.Sprintf("%d consecutive denials", confirm.DefaultBreakerConsecutive)) {
		t.Fatalf("six denied one-request turns: cancels %q, want a trip on %d consecutive denials", c, confirm.DefaultBreakerConsecutive)
	}

	// A new prompt is not an approval: the next denial trips again at once.
	r = newBreakerRig(t, confirm.Breaker{WindowMax: -1})
	for range confirm.DefaultBreakerConsecutive {
		r.turn("rm x")
	}
	if n := len(r.cancelled()); n != 1 {
		t.Fatalf("cancels %d, want 1", n)
	}
	if opt, _ := r.turn("ls"); opt != "allow-once" {
		t.Fatalf("after the next prompt: %s, want the trip cleared", opt)
	}
	for i := 1; i < confirm.DefaultBreakerConsecutive; i++ {
		r.turn("rm x") // the approval reset the count: no trip
	}
	if n := len(r.cancelled()); n != 1 {
		t.Errorf("after an approval and %d denials: cancels %d, want still 1", confirm.DefaultBreakerConsecutive-1, n)
	}
	r.turn("rm x")
	if n := len(r.cancelled()); n != 2 {
		t.Errorf("cancels %d, want a second trip at the fifth denial since the approval", n)
	}
	if opt, msg := outcome(t, await(t, ask(r.b, toolReq("s", "same-turn", "execute", "ls"), newHost("ide"))).result); opt != "reject-once" || msg != gate.BreakerMessage {
		t.Errorf("same turn after the trip: %s %q, want the breaker's denial", opt, msg)
	}
}

// TestBreakerWindowSpansTurns: the sliding window counts denials of
// earlier prompt turns, approvals between them do not reset it, and
// denials older than the window fall out of it.
func TestBreakerWindowSpansTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newBreakerRig(t, confirm.Breaker{Consecutive: -1, WindowMax: 3, Window: time.Minute})
		r.turn("rm a")
		time.Sleep(50 * time.Second)
		r.turn("rm b")
		time.Sleep(20 * time.Second) // "rm a" is now out of the window
		r.turn("ls")
		r.turn("rm c")
		if c := r.cancelled(); len(c) != 0 {
			t.Fatalf("tripped with 2 denials in the window: %q", c)
		}
		time.Sleep(30 * time.Second) // "rm b" is 50s old, "rm c" 30s
		r.turn("ls")
		r.turn("rm d")
		if c := r.cancelled(); len(c) != 1 || !strings.Contains(c[0], "3 denials within 1m0s") {
			t.Errorf("cancels %q, want one trip on 3 denials within 1m0s across turns", c)
		}
	})
}
