package confirm_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// refuseClosings makes the shared store at path refuse every closing of
// an open decision other than an answer's claim (a trigger), as a store
// failing the owner's cancel UPDATE would; the returned func lifts it.
func refuseClosings(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TRIGGER refuse_closing BEFORE UPDATE OF status ON decisions
		WHEN OLD.status = 'open' AND NEW.status <> 'answered' BEGIN SELECT RAISE(ABORT, 'closing refused'); END`); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := db.Exec(`DROP TRIGGER refuse_closing`); err != nil {
			t.Fatal(err)
		}
	}
}

// storedRecord reads decision id from the store at path, as another
// process would.
func storedRecord(t *testing.T, path, id string) store.Record {
	t.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestAnAnswerAfterAnUnstoredClosingIsRefused: bridge A's closing of a
// decision fails in the store (the agent gets cancelled, the row stays
// open); bridge B's answer then wins the claim, but A refuses it: B gets a
// conflict, never an approval, and the row reads A's cancelled
// outcome, delivered.
func TestAnAnswerAfterAnUnstoredClosingIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	refuseClosings(t, path)
	a.CancelSession("sess-1", "session/cancel from host ide")
	jsonEq(t, await(t, ch).result, `{"outcome":{"outcome":"cancelled"}}`)
	if rec := storedRecord(t, path, d.ID()); rec.Status != store.StatusOpen {
		t.Fatalf("row after the refused closing: %s, want open", rec.Status)
	}
	v, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if !errors.Is(err, confirm.ErrConflict) || v.Status == store.StatusAnswered {
		t.Fatalf("answer from B: %v, status %s; want a conflict, not an answer", err, v.Status)
	}
	rec := storedRecord(t, path, d.ID())
	if rec.Status != store.StatusCancelled || rec.DeliveredAt.IsZero() {
		t.Fatalf("row after B's answer: %s/%s delivered %v, want A's cancelled outcome, delivered", rec.Status, rec.Reason, rec.DeliveredAt)
	}
}

// TestAnUnstoredClosingIsWrittenAgain: bridge A's closing fails in the
// store and the row stays open; once the store takes writes again, A's
// heartbeat writes the closing, so the row reads cancelled and delivered,
// and a later answer from bridge B conflicts.
func TestAnUnstoredClosingIsWrittenAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	lift := refuseClosings(t, path)
	a.CancelSession("sess-1", "session/cancel from host ide")
	jsonEq(t, await(t, ch).result, `{"outcome":{"outcome":"cancelled"}}`)
	lift()
	deadline := time.Now().Add(20 * time.Second) // heartbeats every 2s; a liveness bound
	for storedRecord(t, path, d.ID()).Status == store.StatusOpen {
		if time.Now().After(deadline) {
			t.Fatal("the row still reads open: the closing was never written again")
		}
		time.Sleep(100 * time.Millisecond)
	}
	rec := storedRecord(t, path, d.ID())
	if rec.Status != store.StatusCancelled || rec.DeliveredAt.IsZero() {
		t.Fatalf("row: %s/%s delivered %v, want cancelled, delivered", rec.Status, rec.Reason, rec.DeliveredAt)
	}
	if _, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("answer from B: %v, want ErrConflict", err)
	}
}
