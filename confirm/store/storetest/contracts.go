package storetest

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// Trials is how many decisions the claim races of [Run] and [RunShared]
// open, each claimed by two answers at once.
const Trials = 200

// RunShared runs the contracts that need two [store.Store] instances on
// one database, as two bridges (two processes, or two machines) have:
// newPair returns two stores, opened separately on the same empty
// database, that live until the test ends.
func RunShared(t *testing.T, newPair func(t *testing.T) (store.Store, store.Store)) {
	t.Run("ClaimRaceTwoInstances", func(t *testing.T) {
		a, b := newPair(t)
		claimRace(t, a, b)
	})
	t.Run("ClaimSeenByOtherInstance", func(t *testing.T) {
		a, b := newPair(t)
		claimSeenByOther(t, a, b)
	})
}

// claimRace: for each of Trials decisions opened in a, one claim through a
// and one through b start at once; exactly one wins, and the stored
// answer, resolver and journal are the winner's.
func claimRace(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	at := time.Now().UTC()
	for i := range Trials {
		id := "race-" + strconv.Itoa(i)
		insert(t, a, openRecord(id, "s", at))
		var wg sync.WaitGroup
		won := [2]bool{}
		start := make(chan struct{})
		for j, s := range []store.Store{a, b} {
			wg.Go(func() {
				<-start
				by := "host-" + strconv.Itoa(j)
				w, err := s.Claim(ctx, id, store.Transition{Status: store.StatusAnswered,
					Answer: &store.Answer{OptionID: "opt-" + strconv.Itoa(j)}, By: by, Reason: store.ReasonAnswered, At: at,
					Event: store.Event{Seq: 2, At: at, Type: store.EventAnswered, Host: by, Detail: "opt-" + strconv.Itoa(j)}})
				if err != nil {
					t.Error(err)
				}
				won[j] = w
			})
		}
		close(start)
		wg.Wait()
		if won[0] == won[1] {
			t.Fatalf("trial %d: wins %v, want exactly one", i, won)
		}
		w := 0
		if won[1] {
			w = 1
		}
		got, err := b.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.ResolvedBy != "host-"+strconv.Itoa(w) || got.Answer == nil || got.Answer.OptionID != "opt-"+strconv.Itoa(w) ||
			len(got.Events) != 2 || got.Events[1].Host != got.ResolvedBy {
			t.Fatalf("trial %d: winner %d, record %+v", i, w, got)
		}
	}
}

// claimSeenByOther: what one instance inserts and claims, the other reads
// at once (a won claim is durable and shared), and the other's claim of
// it then loses.
func claimSeenByOther(t *testing.T, a, b store.Store) {
	ctx := context.Background()
	at := time.Now().UTC()
	insert(t, a, openRecord("d1", "s", at))
	if _, created, err := b.Insert(ctx, openRecord("d1", "s", at)); err != nil || created {
		t.Fatalf("insert of d1 through b: created %v, err %v", created, err)
	}
	tr := store.Transition{Status: store.StatusTimedOut, Reason: store.ReasonTimeout, At: at,
		Event: store.Event{Seq: 2, At: at, Type: store.EventTimedOut}}
	if won, err := a.Claim(ctx, "d1", tr); !won || err != nil {
		t.Fatalf("claim through a: won %v, err %v", won, err)
	}
	if won, err := b.Claim(ctx, "d1", tr); won || err != nil {
		t.Fatalf("claim through b after a won: won %v, err %v", won, err)
	}
	got, err := b.Get(ctx, "d1")
	if err != nil || got.Status != store.StatusTimedOut || got.Answer != nil {
		t.Fatalf("d1 through b: %+v, err %v", got, err)
	}
}

// claimRaceGoroutines: Trials decisions, each claimed by two goroutines
// at once on one store; exactly one wins each.
func claimRaceGoroutines(t *testing.T, s store.Store) { claimRace(t, s, s) }

// claimClosedWritesNothing: a claim of a closed decision loses and leaves
// its status, answer, resolver, reason and journal as they were; the
// winner's At is its ClosedAt, and a transition without an answer stores
// none.
func claimClosedWritesNothing(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Unix(1700000000, 987654321).UTC()
	insert(t, s, openRecord("d1", "s", at))
	first := store.Transition{Status: store.StatusCancelled, Reason: store.ReasonAgentExited, At: at.Add(time.Second),
		Event: store.Event{Seq: 2, At: at, Type: store.EventCancelled, Detail: "agent_exited"}}
	if won, err := s.Claim(ctx, "d1", first); !won || err != nil {
		t.Fatalf("first claim: won %v, err %v", won, err)
	}
	second := store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "ok"}, By: "h",
		Reason: store.ReasonAnswered, At: at.Add(2 * time.Second), Event: store.Event{Seq: 3, At: at, Type: store.EventAnswered, Host: "h"}}
	if won, err := s.Claim(ctx, "d1", second); won || err != nil {
		t.Fatalf("claim of a closed decision: won %v, err %v", won, err)
	}
	got, err := s.Get(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.StatusCancelled || got.Reason != store.ReasonAgentExited || got.Answer != nil || got.ResolvedBy != "" ||
		!got.ClosedAt.Equal(at.Add(time.Second)) || len(got.Events) != 2 {
		t.Fatalf("record after a losing claim %+v", got)
	}
}

// bytesAndTimesKept: the agent's request and the snapshot come back byte
// for byte (never re-encoded), times with nanoseconds and in UTC, and the
// journal in Seq order whatever the order of Append.
func bytesAndTimesKept(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("X", 5*3600+1800))
	rec := openRecord("d1", "s", at)
	rec.Request = []byte("{ \"z\" : 1,\n\"a\":[ ] }")
	rec.Snapshot = json.RawMessage(`{"z":2, "a" : {"b":"\u00e9"}}`)
	insert(t, s, rec)
	for _, seq := range []int{4, 2, 3} {
		if err := s.Append(ctx, "d1", store.Event{Seq: seq, At: at, Type: store.EventPresented, Host: "h" + strconv.Itoa(seq)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Request) != string(rec.Request) || string(got.Snapshot) != string(rec.Snapshot) {
		t.Fatalf("request %q snapshot %q, want %q %q", got.Request, got.Snapshot, rec.Request, rec.Snapshot)
	}
	if !got.CreatedAt.Equal(at) || got.CreatedAt.Location() != time.UTC || got.CreatedAt.Nanosecond() != 123456789 {
		t.Fatalf("created %v, want %v in UTC", got.CreatedAt, at)
	}
	for i, ev := range got.Events {
		if ev.Seq != i+1 {
			t.Fatalf("journal %+v not in Seq order", got.Events)
		}
	}
}
