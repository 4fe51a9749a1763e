package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// FeedStore is a store with the event feed and pruning, as both
// implementations are.
type FeedStore interface {
	store.Store
	store.Feed
	store.Pruner
}

// RunFeed runs the conformance suite of [store.Feed] and [store.Pruner]
// against stores made by newStore (empty, living until the test ends);
// newPair, when not nil, returns two instances on one empty database, as
// two bridges have.
func RunFeed(t *testing.T, newStore func(t *testing.T) FeedStore, newPair func(t *testing.T) (FeedStore, FeedStore)) {
	t.Run("FeedIDsIncreaseAndResume", func(t *testing.T) { feedResume(t, newStore(t)) })
	t.Run("PruneKeepsOpenRecentAndAlwaysGrants", func(t *testing.T) { prune(t, newStore(t)) })
	if newPair != nil {
		t.Run("FeedReaderMissesNothingOfTwoWriters", func(t *testing.T) {
			a, b := newPair(t)
			feedTwoWriters(t, a, b)
		})
	}
}

func appendFeed(t *testing.T, f store.Feed, ev store.FeedEvent) store.FeedEvent {
	t.Helper()
	got, err := f.AppendFeed(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// feedResume: ids are positive and increase; FeedAfter(n) returns exactly
// the events after n, in order, with every field kept, up to limit.
func feedResume(t *testing.T, s FeedStore) {
	ctx := context.Background()
	if got, err := s.FeedAfter(ctx, 0, 10); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("feed of an empty store: %v, err %v (want an empty result)", got, err)
	}
	if last, err := s.LastFeedID(ctx); err != nil || last != 0 {
		t.Fatalf("LastFeedID of an empty store: %d, err %v", last, err)
	}
	at := time.Date(2026, 7, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	var all []store.FeedEvent
	for i, typ := range []store.FeedType{store.FeedSessionStarted, store.FeedDecisionOpened, store.FeedDecisionAnswered, store.FeedDecisionClosed} {
		ev := appendFeed(t, s, store.FeedEvent{At: at.Add(time.Duration(i) * time.Second), Type: typ, SessionID: "s1",
			DecisionID: map[bool]string{true: "d1"}[i > 0], BridgeID: map[bool]string{true: "bridge-a"}[i == 2],
			Data: json.RawMessage(`{"n":` + string(rune('0'+i)) + `}`)})
		if ev.ID <= 0 || (len(all) > 0 && ev.ID <= all[len(all)-1].ID) {
			t.Fatalf("event %d got id %d after %v", i, ev.ID, all)
		}
		all = append(all, ev)
	}
	if last, err := s.LastFeedID(ctx); err != nil || last != all[3].ID {
		t.Fatalf("LastFeedID %d, err %v; want %d", last, err, all[3].ID)
	}
	got, err := s.FeedAfter(ctx, all[1].ID, 10)
	if err != nil || len(got) != 2 || got[0].ID != all[2].ID || got[1].ID != all[3].ID {
		t.Fatalf("after %d: %+v, err %v; want the last two of %+v", all[1].ID, got, err, all)
	}
	if g := got[0]; !g.At.Equal(all[2].At) || g.At.Location() != time.UTC || g.Type != store.FeedDecisionAnswered ||
		g.SessionID != "s1" || g.DecisionID != "d1" || g.BridgeID != "bridge-a" || string(g.Data) != `{"n":2}` || got[1].BridgeID != "" {
		t.Errorf("stored event %+v, want %+v (time in UTC)", g, all[2])
	}
	if got, _ := s.FeedAfter(ctx, 0, 3); len(got) != 3 || got[0].ID != all[0].ID {
		t.Errorf("limit 3: %+v", got)
	}
	if got, _ := s.FeedAfter(ctx, all[3].ID, 10); len(got) != 0 {
		t.Errorf("after the newest: %+v", got)
	}
}

// feedTwoWriters: two instances append at once while a reader follows
// the feed with FeedAfter(last seen id); the reader sees every event
// exactly once, in id order.
func feedTwoWriters(t *testing.T, a, b FeedStore) {
	const each = 100
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, w := range []FeedStore{a, b} {
		wg.Go(func() {
			for range each {
				if _, err := w.AppendFeed(ctx, store.FeedEvent{At: time.Now(), Type: store.FeedDecisionOpened}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	seen := map[int64]bool{}
	var last int64
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		evs, err := b.FeedAfter(ctx, last, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.ID <= last || seen[ev.ID] {
				t.Fatalf("id %d after %d", ev.ID, last)
			}
			seen[ev.ID], last = true, ev.ID
		}
		if finished && len(evs) == 0 {
			break
		}
	}
	if len(seen) != 2*each {
		t.Fatalf("the reader saw %d events, want %d", len(seen), 2*each)
	}
}

// prune: a decision closed before the cut goes with its journal and its
// feed events, and so do old session events; an open decision (however
// old), one closed after the cut, and one an ALWAYS verdict was granted by
// stay, with their journals; every audit row and rule stays; a hash chain
// over the journal still verifies.
func prune(t *testing.T, s FeedStore) {
	ctx := context.Background()
	now := time.Now().UTC()
	old, cut := now.Add(-40*24*time.Hour), now.Add(-30*24*time.Hour)
	closeAt := func(id string, at time.Time) {
		t.Helper()
		won, err := s.Claim(ctx, id, store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
			By: "h", Reason: store.ReasonAnswered, At: at, Event: store.Event{Seq: 2, At: at, Type: store.EventAnswered, Host: "h"}})
		if err != nil || !won {
			t.Fatalf("claim %s: %v %v", id, won, err)
		}
	}
	for _, id := range []string{"old", "recent", "open", "always"} {
		insert(t, s, openRecord(id, "s", old))
		appendFeed(t, s, store.FeedEvent{At: old, Type: store.FeedDecisionOpened, SessionID: "s", DecisionID: id})
	}
	closeAt("old", old)
	closeAt("always", old)
	closeAt("recent", now)
	if err := s.InsertRule(ctx, store.Rule{Key: "k", Agent: "a", Kind: "execute", Target: "ls", Decision: "allow",
		DecisionID: "always", By: "h", CreatedAt: old}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"old", "always"} {
		if err := s.InsertPlanItem(ctx, store.PlanItem{ID: id, SessionID: "s", DecidedAt: old, Item: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	appendFeed(t, s, store.FeedEvent{At: old, Type: store.FeedSessionStarted, SessionID: "s"})
	appendFeed(t, s, store.FeedEvent{At: now, Type: store.FeedSessionStarted, SessionID: "s2"})

	notes, hasNotes := store.Store(s).(store.Notes)
	if hasNotes { // notes no owner took (a bridge that died): the old decision's goes with it
		for _, id := range []string{"old", "recent"} {
			if err := notes.AddNote(ctx, id, store.Event{At: old, Type: store.EventAnswered, Host: "other", Detail: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	chain, chained := store.Store(s).(store.Chain)
	var before int64
	if chained {
		var err error
		if before, err = verify(t, chain); err != nil {
			t.Fatalf("chain before prune: %v", err)
		}
	}
	res, err := s.Prune(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	if chained { // the pruned journal rows leave placeholders and the prune a chained event: the chain still verifies, end to end
		if n, err := verify(t, chain); err != nil || n != before+1 {
			t.Errorf("chain after prune: %d rows, %v; want %d rows, nil", n, err, before+1)
		}
	}
	if res != (store.PruneResult{Decisions: 1, Feed: 2}) {
		t.Errorf("prune result %+v, want 1 decision and 2 feed events", res)
	}
	if hasNotes {
		got, err := notes.TakeNotes(ctx, "")
		if err != nil || len(got) != 1 || got[0].DecisionID != "recent" {
			t.Errorf("notes after prune: %+v, %v; want only the recent decision's", got, err)
		}
	}
	if _, err := s.Get(ctx, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the old closed decision: %v, want ErrNotFound", err)
	}
	for id, events := range map[string]int{"recent": 2, "open": 1, "always": 2} {
		if rec, err := s.Get(ctx, id); err != nil || len(rec.Events) != events {
			t.Errorf("decision %s after prune: %d events, err %v; want kept with %d", id, len(rec.Events), err, events)
		}
	}
	if items, err := s.PlanItems(ctx, "s", 10); err != nil || len(items) != 2 {
		t.Errorf("audit rows after prune: %d, err %v; want both kept", len(items), err)
	}
	if rules, err := s.Rules(ctx); err != nil || len(rules) != 1 {
		t.Errorf("rules after prune: %v, err %v", rules, err)
	}
	feed, _ := s.FeedAfter(ctx, 0, 100)
	var kept []string
	for _, ev := range feed {
		kept = append(kept, ev.DecisionID+"/"+ev.SessionID)
	}
	if len(feed) != 4 || kept[0] != "recent/s" || kept[1] != "open/s" || kept[2] != "always/s" || kept[3] != "/s2" {
		t.Errorf("feed after prune: %v, want recent, open, always and the new session event", kept)
	}
}
