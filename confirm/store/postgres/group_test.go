package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

func openRecord(id string, at time.Time) store.Record {
	return store.Record{ID: id, SessionID: "s", AgentKey: id, Request: []byte(`{}`), Snapshot: json.RawMessage(`{}`),
		Status: store.StatusOpen, CreatedAt: at, Deadline: at.Add(time.Hour), Events: []store.Event{{Seq: 1, At: at, Type: store.EventOpened}}}
}

// TestClaimsSharingACommitStayAtomicEach: 40 decisions are each claimed
// at once through two store instances (two processes), 80 claims in flight
// that each instance commits in shared transactions (group commit); every
// decision has exactly one winner, holding that winner's answer, only the
// winner's journal event is written, and the audit chain verifies.
func TestClaimsSharingACommitStayAtomicEach(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	a, b := open(t, url), open(t, url)
	ctx := context.Background()
	at := time.Now().UTC()
	const n = 40
	for i := range n {
		if _, created, err := a.Insert(ctx, openRecord(fmt.Sprint("d", i), at)); err != nil || !created {
			t.Fatalf("insert: %v %v", created, err)
		}
	}
	type result struct {
		by  string
		won bool
	}
	results := make([][]result, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		for who, s := range map[string]*postgres.Store{"A": a, "B": b} {
			wg.Go(func() {
				id := fmt.Sprint("d", i)
				won, err := s.Claim(ctx, id, store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow-" + who},
					By: "http@" + who, Reason: store.ReasonAnswered, At: at, Event: store.Event{Seq: 2, At: at, Type: store.EventAnswered, Host: "http@" + who}})
				if err != nil {
					t.Errorf("claim %s by %s: %v", id, who, err)
				}
				mu.Lock()
				results[i] = append(results[i], result{who, won})
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	for i, rs := range results {
		var winners []string
		for _, r := range rs {
			if r.won {
				winners = append(winners, r.by)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("d%d: winners %v, want exactly one", i, winners)
		}
		rec, err := a.Get(ctx, fmt.Sprint("d", i))
		if err != nil {
			t.Fatal(err)
		}
		if rec.Answer == nil || rec.Answer.OptionID != "allow-"+winners[0] || rec.ResolvedBy != "http@"+winners[0] {
			t.Fatalf("d%d holds %+v by %s, want the winner %s's answer", i, rec.Answer, rec.ResolvedBy, winners[0])
		}
		if len(rec.Events) != 2 || rec.Events[1].Host != "http@"+winners[0] {
			t.Fatalf("d%d journal %+v: want opened and the winner's answered only", i, rec.Events)
		}
	}
	head, rows, err := a.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.VerifyChain(head, rows); err != nil {
		t.Fatalf("audit chain after shared commits: %v", err)
	}
}

// TestAFailingWriteFailsOnlyItself: among 30 concurrent writes through one
// instance, which share commits, one fails in the database (a NUL byte in
// a journal detail, which PostgreSQL's text refuses); it alone fails and
// every other write is stored.
func TestAFailingWriteFailsOnlyItself(t *testing.T) {
	s := open(t, pgtest.Start(t).Database(t))
	ctx := context.Background()
	at := time.Now().UTC()
	var wg sync.WaitGroup
	errs := make([]error, 30)
	for i := range errs {
		wg.Go(func() {
			rec := openRecord(fmt.Sprint("d", i), at)
			if i == 7 {
				rec.Events[0].Detail = "bad\x00byte"
			}
			_, _, errs[i] = s.Insert(ctx, rec)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == 7) {
			t.Fatalf("write %d: err %v (only write 7 must fail)", i, err)
		}
		if _, gerr := s.Get(ctx, fmt.Sprint("d", i)); (gerr == nil) != (i != 7) {
			t.Fatalf("write %d stored: %v (only write 7 must be missing)", i, gerr)
		}
	}
}

// TestSettledReadsOnlyClaimsTheirOwnerTook: Settled returns, for one query
// of many ids, the delivered claim and the one the owner refused as stale,
// with their journals, and leaves out an answer still awaiting its owner,
// an open decision and an unknown id.
func TestSettledReadsOnlyClaimsTheirOwnerTook(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	owner, claimer := open(t, url), open(t, url)
	ctx := context.Background()
	at := time.Now().UTC()
	for _, id := range []string{"delivered", "stale", "waiting", "open"} {
		if _, _, err := owner.Insert(ctx, openRecord(id, at)); err != nil {
			t.Fatal(err)
		}
		if id == "open" {
			continue
		}
		if won, err := claimer.Claim(ctx, id, store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
			By: "http@inbox", Reason: store.ReasonAnswered, At: at}); err != nil || !won {
			t.Fatalf("claim %s: %v %v", id, won, err)
		}
	}
	if err := owner.Append(ctx, "delivered", store.Event{Seq: 2, At: at, Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	if ok, err := owner.Reclose(ctx, "stale", store.Transition{Status: store.StatusCancelled, Reason: store.ReasonStale, At: at,
		Event: store.Event{Seq: 2, At: at, Type: store.EventCancelled, Detail: "stale"}}); err != nil || !ok {
		t.Fatalf("reclose: %v %v", ok, err)
	}
	recs, err := claimer.Settled(ctx, []string{"delivered", "stale", "waiting", "open", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]store.Record{}
	for _, r := range recs {
		got[r.ID] = r
	}
	if len(got) != 2 || got["delivered"].DeliveredAt.IsZero() || got["stale"].Reason != store.ReasonStale {
		t.Fatalf("settled %+v: want delivered and stale only", recs)
	}
	if evs := got["delivered"].Events; len(evs) != 2 || evs[1].Type != store.EventDelivered {
		t.Fatalf("delivered journal %+v", evs)
	}
}

// TestReadsSharingAStatementGetTheirOwn: 60 concurrent reads through one
// instance, which share statements, each get their own decision with its
// journal, and a read of an unknown id gets ErrNotFound; a read after a
// write sees it.
func TestReadsSharingAStatementGetTheirOwn(t *testing.T) {
	s := open(t, pgtest.Start(t).Database(t))
	ctx := context.Background()
	at := time.Now().UTC()
	for i := range 30 {
		if _, _, err := s.Insert(ctx, openRecord(fmt.Sprint("d", i), at)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			id := fmt.Sprint("d", i)
			rec, err := s.Get(ctx, id)
			switch {
			case i >= 30 && !errors.Is(err, store.ErrNotFound):
				t.Errorf("get unknown %s: %+v, %v, want ErrNotFound", id, rec, err)
			case i < 30 && (err != nil || rec.ID != id || rec.AgentKey != id || len(rec.Events) != 1):
				t.Errorf("get %s: %+v, %v", id, rec, err)
			}
		})
	}
	wg.Wait()
	if err := s.Append(ctx, "d3", store.Event{Seq: 2, At: at, Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Get(ctx, "d3"); err != nil || rec.DeliveredAt.IsZero() || len(rec.Events) != 2 {
		t.Fatalf("read after a write: %+v, %v", rec, err)
	}
}
