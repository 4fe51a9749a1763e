package confirm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// writeLog is a SQLite store that records its journal writes: which
// stored a delivered event, and each write's events.
type writeLog struct {
	*sqlite.Store
	mu        sync.Mutex
	delivered []string // per write with a delivered event: "append" or "closing"
	writes    []loggedWrite
}

// loggedWrite is one journal write of a writeLog.
type loggedWrite struct {
	kind   string   // "append" or "closing" (with the audit row)
	events []string // "type@host" of each event, in order
}

func (w *writeLog) note(kind string, evs []store.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lw := loggedWrite{kind: kind}
	for _, ev := range evs {
		lw.events = append(lw.events, string(ev.Type)+"@"+ev.Host)
	}
	w.writes = append(w.writes, lw)
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

// slowClosing is a store whose closing write takes 5 s of the broker's
// clock.
type slowClosing struct {
	*sqlite.Store
	clock *fakeClock
}

func (s slowClosing) AppendClosing(ctx context.Context, id string, evs []store.Event, it store.PlanItem) error {
	s.clock.advance(5 * time.Second)
	return s.Store.AppendClosing(ctx, id, evs, it)
}

// fakeClock is a broker clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestDecisionClosedLogsTheAgentsWait: the "decision closed" line's
// wait_ms is the time to the answer, and delivered_ms the agent's own
// wait, which includes storing the closing: with a closing write that
// takes 5 s, wait_ms stays 0 and delivered_ms is 5000.
func TestDecisionClosedLogsTheAgentsWait(t *testing.T) {
	clock := &fakeClock{now: time.Now()}
	var logged bytes.Buffer
	var mu sync.Mutex
	b := newBroker(t, confirm.Options{Store: slowClosing{memStore(t), clock}, Now: clock.Now,
		Logger: slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logged}, nil))})
	ide := newHost("ide")
	ch := ask(b, req("sess-1", "k"), ide)
	d := ide.wait(t)
	if _, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "ide", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	mu.Lock()
	defer mu.Unlock()
	for line := range strings.SplitSeq(logged.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil || m["msg"] != "decision closed" {
			continue
		}
		if m["wait_ms"] != 0.0 || m["delivered_ms"] != 5000.0 {
			t.Fatalf("decision closed: wait_ms %v, delivered_ms %v; want 0 and 5000", m["wait_ms"], m["delivered_ms"])
		}
		return
	}
	t.Fatalf("no decision closed line:\n%s", logged.String())
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
