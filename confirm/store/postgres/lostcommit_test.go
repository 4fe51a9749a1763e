package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestALostCommitResultIsNoLostClaim: two claims share a group commit's
// transaction, which commits, but its result is lost (the connection
// dropped after COMMIT, injected); neither claim reports a loss (won =
// false), which its own committed change would show when run again: each
// reports the error (unknown outcome), and the rows hold the claims.
func TestALostCommitResultIsNoLostClaim(t *testing.T) {
	s := open(t, pgtest.Start(t).Database(t))
	ctx := context.Background()
	at := time.Now().UTC()
	for _, id := range []string{"d0", "d1", "d2"} {
		if _, _, err := s.Insert(ctx, openRecord(id, at)); err != nil {
			t.Fatal(err)
		}
	}
	lost := errors.New("unexpected EOF after COMMIT")
	first, release := make(chan struct{}), make(chan struct{})
	calls := 0
	postgres.SetGroupCommitted(s, func(n int, err error) error {
		calls++
		switch {
		case calls == 1: // d0's, alone: hold the group commit while d1's and d2's queue
			close(first)
			<-release
		case n == 2 && err == nil:
			return lost
		}
		return err
	})
	claim := func(id string) (bool, error) {
		return s.Claim(ctx, id, store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
			By: "http@inbox", Reason: store.ReasonAnswered, At: at, Event: store.Event{Seq: 2, At: at, Type: store.EventAnswered}})
	}
	type result struct {
		won bool
		err error
	}
	results := make(chan result, 3)
	go func() { won, err := claim("d0"); results <- result{won, err} }()
	<-first
	for _, id := range []string{"d1", "d2"} {
		go func() { won, err := claim(id); results <- result{won, err} }()
	}
	for postgres.QueuedWrites(s) < 2 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	var errs int
	for range 3 {
		r := <-results
		switch {
		case errors.Is(r.err, lost):
			errs++
		case r.err != nil || !r.won:
			t.Fatalf("claim: won %v, err %v; want won, or the lost result's error", r.won, r.err)
		}
	}
	if errs != 2 {
		t.Fatalf("%d claims reported the lost result, want 2", errs)
	}
	for _, id := range []string{"d0", "d1", "d2"} {
		if rec, err := s.Get(ctx, id); err != nil || rec.Status != store.StatusAnswered {
			t.Fatalf("%s: %s %v, want answered", id, rec.Status, err)
		}
	}
}
