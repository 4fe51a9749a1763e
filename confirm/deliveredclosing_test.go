package confirm_test

import (
	"context"
	"sync"
	"testing"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// writeLog is a SQLite store that records which writes stored a
// delivered event.
type writeLog struct {
	*sqlite.Store
	mu        sync.Mutex
	delivered []string // per write with a delivered event: "append" or "closing"
}

func (w *writeLog) note(kind string, evs []store.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ev := range evs {
		if ev.Type == store.EventDelivered {
			w.delivered = append(w.delivered, kind)
		}
	}
}

func (w *writeLog) Append(ctx context.Context, id string, ev store.Event) error {
	w.note("append", []store.Event{ev})
	return w.Store.Append(ctx, id, ev)
}

func (w *writeLog) AppendEvents(ctx context.Context, id string, evs []store.Event) error {
	w.note("append", evs)
	return w.Store.AppendEvents(ctx, id, evs)
}

func (w *writeLog) AppendClosing(ctx context.Context, id string, evs []store.Event, it store.PlanItem) error {
	w.note("closing", evs)
	return w.Store.AppendClosing(ctx, id, evs, it)
}

// TestDeliveredIsStoredWithTheClosing: the hand-over of an answered
// decision's result to its agent (the delivered event, and the row's
// delivered time) is stored in the same write as the answer's closing
// events and audit row, not in a write of its own after it; the journal
// holds it once.
func TestDeliveredIsStoredWithTheClosing(t *testing.T) {
	w := &writeLog{Store: memStore(t)}
	b := newBroker(t, confirm.Options{Store: w})
	ide := newHost("ide")
	ch := ask(b, req("sess-1", "k"), ide)
	d := ide.wait(t)
	if _, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "ide", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	w.mu.Lock()
	writes := w.delivered
	w.mu.Unlock()
	if len(writes) != 1 || writes[0] != "closing" {
		t.Fatalf("writes with a delivered event: %v, want the closing write only", writes)
	}
	rec, err := w.Get(context.Background(), d.ID())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range rec.Events {
		if ev.Type == store.EventDelivered {
			n++
		}
	}
	if n != 1 || rec.DeliveredAt.IsZero() {
		t.Fatalf("stored: %d delivered events, delivered at %v", n, rec.DeliveredAt)
	}
}
