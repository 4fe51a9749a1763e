package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestALockedRowDelaysOnlyItsOwnWrite: another session holds decision
// x0's row lock (SELECT ... FOR UPDATE in an open transaction); the
// closing of x0 waits for it, while the closings of x1 and x2 through the
// same store instance (which share its group commit) are stored before
// the lock is released; x0's then is stored too.
func TestALockedRowDelaysOnlyItsOwnWrite(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	s := open(t, url)
	ctx := context.Background()
	at := time.Now().UTC()
	for _, id := range []string{"x0", "x1", "x2"} {
		if _, _, err := s.Insert(ctx, openRecord(id, at)); err != nil {
			t.Fatal(err)
		}
	}
	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT id FROM decisions WHERE id = 'x0' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		id  string
		won bool
		err error
	}
	results := make(chan result, 3)
	timeOut := func(id string) {
		won, err := s.Claim(ctx, id, store.Transition{Status: store.StatusTimedOut, Reason: store.ReasonTimeout, At: at,
			Event: store.Event{Seq: 2, At: at, Type: store.EventTimedOut}})
		results <- result{id, won, err}
	}
	go timeOut("x0")
	// x0's closing waits for the row lock before x1's and x2's are queued.
	// pg_locks, not pg_stat_activity: the locker asks inside its open
	// transaction, where pg_stat_activity is one snapshot for the whole
	// transaction (a wait that began after the first look never shows).
	for waiting := 0; waiting == 0; {
		if err := locker.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	go timeOut("x1")
	go timeOut("x2")
	for range 2 {
		select {
		case r := <-results:
			if r.id == "x0" || r.err != nil || !r.won {
				t.Fatalf("while x0 is locked: %+v, want x1 and x2 closed", r)
			}
		case <-time.After(20 * time.Second): // a liveness bound, not a speed target
			t.Fatal("the closings of x1 and x2 wait for x0's locked row")
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-results; r.id != "x0" || r.err != nil || !r.won {
		t.Fatalf("x0 after the lock: %+v, want closed", r)
	}
	for _, id := range []string{"x0", "x1", "x2"} {
		rec, err := s.Get(ctx, id)
		if err != nil || rec.Status != store.StatusTimedOut || len(rec.Events) != 2 {
			t.Fatalf("%s: %+v %v, want timed_out with its event", id, rec, err)
		}
	}
}

// TestGroupCommitLeavesNoWarning: the group commit's transactions (an
// insert, a claim, an append) put no WARNING in the server's log; its
// bound on lock waits (boundLockWait) once was a SET LOCAL, which the
// server answers with one for every transaction of a pipeline.
func TestGroupCommitLeavesNoWarning(t *testing.T) {
	srv := pgtest.Start(t)
	s := open(t, srv.Database(t))
	ctx := context.Background()
	at := time.Now().UTC()
	if _, _, err := s.Insert(ctx, openRecord("w1", at)); err != nil {
		t.Fatal(err)
	}
	won, err := s.Claim(ctx, "w1", store.Transition{Status: store.StatusAnswered, Reason: store.ReasonAnswered, At: at,
		Answer: &store.Answer{OptionID: "allow"}, By: "test", Event: store.Event{Seq: 2, At: at, Type: store.EventAnswered}})
	if err != nil || !won {
		t.Fatalf("claim: won %v, %v", won, err)
	}
	if err := s.Append(ctx, "w1", store.Event{Seq: 3, At: at, Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	if log := srv.Log(t); strings.Contains(log, "WARNING") {
		t.Fatalf("the server logged a warning:\n%s", log)
	}
}
