package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestPruneDeletesOnlyWhatItRecorded: a decision that closes while a
// prune runs (between the prune's recording of placeholders and its
// deletes) is neither deleted without a placeholder nor half pruned: the
// prune deletes exactly the decisions it chose and recorded, and the chain
// verifies afterwards. The prune is held between its statements by a lock
// another session holds on feed_events, while the decision's closing
// commits.
func TestPruneDeletesOnlyWhatItRecorded(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	s := open(t, url)
	ctx := context.Background()
	old := time.Now().UTC().Add(-time.Hour)
	for _, id := range []string{"closed", "closing"} {
		if _, _, err := s.Insert(ctx, openRecord(id, old)); err != nil {
			t.Fatal(err)
		}
	}
	closeIt := func(id string) {
		t.Helper()
		won, err := s.Claim(ctx, id, store.Transition{Status: store.StatusTimedOut, Reason: store.ReasonTimeout, At: old,
			Event: store.Event{Seq: 2, At: old, Type: store.EventTimedOut}})
		if err != nil || !won {
			t.Fatalf("close %s: %v %v", id, won, err)
		}
	}
	closeIt("closed")

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
	if _, err := tx.Exec(ctx, `LOCK TABLE feed_events IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		res store.PruneResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.Prune(ctx, time.Now().Add(time.Hour))
		done <- result{res, err}
	}()
	// The prune has recorded its placeholders and waits to delete feed
	// events.
	for waiting := 0; waiting == 0; {
		select {
		case r := <-done:
			t.Fatalf("the prune ended before it waited for feed_events: %+v, %v", r.res, r.err)
		default:
		}
		if err := locker.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'feed_events'::regclass`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	closeIt("closing") // commits while the prune waits
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second): // a liveness bound, not a speed target
		t.Fatal("the prune did not end after the lock was released")
	}
	if r.err != nil || r.res.Decisions != 1 {
		t.Fatalf("prune: %+v, %v; want the one decision closed when it began", r.res, r.err)
	}
	if _, err := s.Get(ctx, "closing"); err != nil {
		t.Errorf("the decision that closed during the prune: %v, want it kept for the next prune", err)
	}
	head, rows, err := s.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.VerifyChain(head, rows); err != nil {
		t.Errorf("after the prune the chain does not verify (%d rows good): %v", n, err)
	}
}
