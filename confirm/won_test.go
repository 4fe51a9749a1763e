package confirm_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/acpmux/acpmux/confirm"
)

// quickHost answers every decision inside Present, before Present returns:
// a host whose answer arrives while the broker still counts it as being
// presented the decision (a fast WebSocket host).
type quickHost struct {
	b *confirm.Broker

	mu        sync.Mutex // guards won, withdrawn
	won       []confirm.Resolution
	withdrawn int
}

func (h *quickHost) HostID() string { return "quick" }

func (h *quickHost) Present(d *confirm.Decision) error {
	return h.b.AnswerResult(context.Background(), d.ID(), "quick", json.RawMessage(selected("allow-once")))
}

func (h *quickHost) Withdraw(*confirm.Decision, confirm.Resolution) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.withdrawn++
}

func (h *quickHost) Won(_ *confirm.Decision, res confirm.Resolution) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.won = append(h.won, res)
}

// TestWinnerAnsweringDuringPresentIsToldItWon: a host whose answer wins
// before its Present has returned is told it won (Presenter.Won, once), as
// a host that answers later is; it is never withdrawn.
func TestWinnerAnsweringDuringPresentIsToldItWon(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	quick := &quickHost{b: b}
	slow := newHost("slow")
	res := await(t, ask(b, req("s", "k"), quick, slow))
	jsonEq(t, res.result, selected("allow-once"))
	quick.mu.Lock()
	defer quick.mu.Unlock()
	if len(quick.won) != 1 || quick.won[0].By != "quick" || quick.won[0].OptionID != "allow-once" {
		t.Errorf("the winner was told %+v, want one Won by quick with allow-once", quick.won)
	}
	if quick.withdrawn != 0 {
		t.Errorf("the winner was withdrawn %d times", quick.withdrawn)
	}
	if w := slow.withdrawals(); len(w) != 1 || w[0].By != "quick" {
		t.Errorf("the other host's withdrawals %+v", w)
	}
}
