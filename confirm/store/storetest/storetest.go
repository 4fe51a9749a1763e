// Package storetest is the conformance suite of [store.Store]: every
// implementation runs [Run] with a constructor of empty stores, so that the
// broker can rely on the contracts documented on the interface.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// Run runs the conformance suite against stores made by newStore, which
// must return an empty, durable or not, store that lives until the test
// ends (newStore registers its own cleanup).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"ClaimOnce", claimOnce},
		{"InsertKeepsExisting", insertKeepsExisting},
		{"AppendIgnoresKnownSeqAndSetsDelivered", appendEvents},
		{"ListNewestOldestFirst", list},
		{"PlanItemsImmutableAndFiltered", planItems},
		{"RulesReplaceByKey", rules},
		{"RulesRevoke", rulesRevoke}, // rulesrevoke.go
		{"ModeEvents", modeEvents},
		{"ClaimRaceGoroutines", claimRaceGoroutines},
		{"ClaimOfClosedWritesNothing", claimClosedWritesNothing},
		{"BytesAndTimesKept", bytesAndTimesKept},
		{"AppendManyInOneWrite", appendManyInOneWrite},                          // appendmany.go
		{"AppendClosingInOneWrite", appendClosingInOneWrite},                    // appendclosing.go
		{"ClaimAfterAnEarlierDeliveryIsUndelivered", claimAfterEarlierDelivery}, // claimdelivered.go
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

func openRecord(id, session string, at time.Time) store.Record {
	return store.Record{ID: id, SessionID: session, AgentKey: "k-" + id, Request: []byte(`{"a":1}`),
		Snapshot: json.RawMessage(`{"title":"t"}`), Status: store.StatusOpen, CreatedAt: at, Deadline: at.Add(time.Minute),
		Events: []store.Event{{Seq: 1, At: at, Type: store.EventOpened}}}
}

func insert(t *testing.T, s store.Store, rec store.Record) {
	t.Helper()
	if _, created, err := s.Insert(context.Background(), rec); err != nil || !created {
		t.Fatalf("insert %s: created %v, err %v", rec.ID, created, err)
	}
}

// claimOnce: of 50 concurrent claims exactly one wins, its event is
// journalled with the row (the winner's answer with its scope), and a
// missing id is ErrNotFound.
func claimOnce(t *testing.T, s store.Store) {
	ctx := context.Background()
	rec := openRecord("d1", "s", time.Now())
	insert(t, s, rec)
	if got, created, err := s.Insert(ctx, rec); err != nil || created || got.ID != "d1" {
		t.Fatalf("second insert: %v %v", created, err)
	}
	results := make(chan bool, 50)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			won, err := s.Claim(ctx, "d1", store.Transition{Status: store.StatusAnswered,
				Answer: &store.Answer{OptionID: strconv.Itoa(i), Scope: "S" + strconv.Itoa(i)}, By: "h" + strconv.Itoa(i), Reason: store.ReasonAnswered, At: time.Now(),
				Event: store.Event{Seq: 2, At: time.Now(), Type: store.EventAnswered, Host: "h" + strconv.Itoa(i)}})
			if err != nil {
				t.Error(err)
			}
			results <- won
		})
	}
	wg.Wait()
	close(results)
	wins := 0
	for won := range results {
		if won {
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d claims won, want 1", wins)
	}
	got, _ := s.Get(ctx, "d1")
	if got.Status != store.StatusAnswered || len(got.Events) != 2 || got.Events[1].Host != got.ResolvedBy ||
		got.Answer == nil || "h"+got.Answer.OptionID != got.ResolvedBy || "S"+got.Answer.OptionID != got.Answer.Scope ||
		got.Reason != store.ReasonAnswered || got.ClosedAt.IsZero() {
		t.Fatalf("record %+v", got)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	if won, err := s.Claim(ctx, "nope", store.Transition{Status: store.StatusCancelled, Reason: store.ReasonStale,
		Event: store.Event{Seq: 2, Type: store.EventCancelled}}); won || err != nil {
		t.Fatalf("claim of a missing decision: won %v, err %v", won, err)
	}
}

// insertKeepsExisting: a second Insert of the same id returns the stored
// record, with its journal, unchanged.
func insertKeepsExisting(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Unix(1700000000, 123456789).UTC()
	rec := openRecord("d1", "s", at)
	insert(t, s, rec)
	other := openRecord("d1", "other", at.Add(time.Hour))
	got, created, err := s.Insert(ctx, other)
	if err != nil || created {
		t.Fatalf("second insert: created %v, err %v", created, err)
	}
	if got.SessionID != "s" || !got.CreatedAt.Equal(at) || string(got.Request) != `{"a":1}` || len(got.Events) != 1 {
		t.Fatalf("existing record %+v", got)
	}
	var snap map[string]any
	if err := json.Unmarshal(got.Snapshot, &snap); err != nil || snap["title"] != "t" {
		t.Fatalf("snapshot %s: %v", got.Snapshot, err)
	}
}

// appendEvents: an event with a known Seq is ignored; delivered sets
// DeliveredAt once.
func appendEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Now().UTC()
	insert(t, s, openRecord("d1", "s", at))
	for _, ev := range []store.Event{
		{Seq: 2, At: at, Type: store.EventPresented, Host: "ide"},
		{Seq: 2, At: at, Type: store.EventAbstained, Host: "ide"},
		{Seq: 3, At: at.Add(time.Second), Type: store.EventDelivered},
		{Seq: 4, At: at.Add(2 * time.Second), Type: store.EventDelivered},
	} {
		if err := s.Append(ctx, "d1", ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 4 || got.Events[1].Type != store.EventPresented || !got.DeliveredAt.Equal(at.Add(time.Second)) {
		t.Fatalf("events %+v, delivered %v", got.Events, got.DeliveredAt)
	}
}

// list: the newest limit decisions of a session, oldest first, without
// journals.
func list(t *testing.T, s store.Store) {
	at := time.Now().UTC()
	for i := range 4 {
		insert(t, s, openRecord("d"+strconv.Itoa(i), "s", at.Add(time.Duration(i)*time.Second)))
	}
	insert(t, s, openRecord("x", "other", at))
	got, err := s.List(context.Background(), "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != "d1" || got[2].ID != "d3" || got[0].Events != nil {
		t.Fatalf("list %+v", got)
	}
	if none, err := s.List(context.Background(), "nobody", 3); err != nil || len(none) != 0 {
		t.Fatalf("list of an unknown session: %v %v", none, err)
	}
}

// planItems: a second row with the same id is ignored; rows come oldest
// first, filtered by session, the newest limit.
func planItems(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Now().UTC()
	for i, sid := range []string{"a", "b", "a", "a"} {
		it := store.PlanItem{ID: "p" + strconv.Itoa(i), SessionID: sid, DecidedAt: at.Add(time.Duration(i) * time.Second),
			Item: json.RawMessage(`{"n":` + strconv.Itoa(i) + `}`)}
		if err := s.InsertPlanItem(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.InsertPlanItem(ctx, store.PlanItem{ID: "p0", SessionID: "a", DecidedAt: at, Item: json.RawMessage(`{"n":99}`)}); err != nil {
		t.Fatalf("second row for p0: %v", err)
	}
	all, err := s.PlanItems(ctx, "", 10)
	if err != nil || len(all) != 4 || string(all[0].Item) != `{"n":0}` {
		t.Fatalf("all rows %+v, err %v", all, err)
	}
	a, err := s.PlanItems(ctx, "a", 2)
	if err != nil || len(a) != 2 || a[0].ID != "p2" || a[1].ID != "p3" || !a[1].DecidedAt.Equal(at.Add(3*time.Second)) {
		t.Fatalf("rows of a %+v, err %v", a, err)
	}
}

// rules: InsertRule replaces the rule with the same key.
func rules(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Now().UTC()
	for _, r := range []store.Rule{
		{Key: "k1", Agent: "a", Kind: "execute", Target: "make", Decision: "allow", DecisionID: "d1", By: "ide", CreatedAt: at},
		{Key: "k2", Agent: "a", Kind: "edit", Target: "x", Decision: "deny", DecisionID: "d2", By: "ide", CreatedAt: at.Add(time.Second)},
		{Key: "k1", Agent: "a", Kind: "execute", Target: "make", Decision: "deny", DecisionID: "d3", By: "http", CreatedAt: at.Add(2 * time.Second)},
	} {
		if err := s.InsertRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Rules(ctx)
	if err != nil || len(got) != 2 || got[0].Key != "k2" || got[1].Decision != "deny" || got[1].DecisionID != "d3" {
		t.Fatalf("rules %+v, err %v", got, err)
	}
}

// modeEvents: a mode change is journalled.
func modeEvents(t *testing.T, s store.Store) {
	if err := s.InsertModeEvent(context.Background(), store.ModeEvent{SessionID: "s", At: time.Now(), Mode: "plan", Revision: 1, By: "ide"}); err != nil {
		t.Fatal(err)
	}
}
