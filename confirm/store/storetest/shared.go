package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// RunSharedStore runs the contracts of [store.Shared]: newPair returns two
// instances opened separately on one empty database, as two bridges have.
func RunSharedStore(t *testing.T, newPair func(t *testing.T) (store.Shared, store.Shared)) {
	t.Run("SessionsKeyedByBridge", func(t *testing.T) {
		a, b := newPair(t)
		sessionsKeyedByBridge(t, a, b)
	})
	t.Run("OtherInstanceClaimWakesWatchAndIsUnsettled", func(t *testing.T) {
		a, b := newPair(t)
		claimWakesOwner(t, a, b)
	})
	t.Run("OwnerLostAfterLeaseNeverClaimed", func(t *testing.T) {
		a, b := newPair(t)
		ownerLost(t, a, b)
	})
	t.Run("NotesReachTheOwnerAndClaimsKeepThePerson", func(t *testing.T) {
		a, b := newPair(t)
		notesAndClaimPerson(t, a, b) // notes.go
	})
	t.Run("OwnerLostWithoutARegistryRow", func(t *testing.T) {
		a, b := newPair(t)
		ownerLostWithoutRow(t, a, b)
	})
	t.Run("PruneTakesBridgesGoneWithNoDecisionLeft", func(t *testing.T) {
		a, b := newPair(t)
		pruneBridges(t, a, b)
	})
}

// pruneBridges: Prune deletes the registered bridges whose last heartbeat
// is before its cutoff and that have no decision left, after deleting the
// decisions it prunes; a bridge with a decision kept (open) or a recent
// heartbeat stays. A heartbeat of a deleted bridge is ErrNotFound.
func pruneBridges(t *testing.T, a, b store.Shared) {
	p, ok := a.(store.Pruner)
	if !ok {
		t.Skip("the store does not prune")
	}
	ctx := context.Background()
	now := time.Now().UTC()
	old, cut := now.Add(-40*24*time.Hour), now.Add(-30*24*time.Hour)
	for _, br := range []store.Bridge{bridgeAt("gone", old), bridgeAt("gone-pruned", old), bridgeAt("gone-open", old), bridgeAt("live", now)} {
		if err := b.RegisterBridge(ctx, br); err != nil {
			t.Fatal(err)
		}
	}
	// gone-pruned's only decision closed long ago: Prune deletes it, then
	// the bridge. gone-open's is open: kept, and the bridge with it.
	insert(t, a, bridgeRecord("d-pruned", "gone-pruned", "s", old))
	if won, err := a.Claim(ctx, "d-pruned", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
		By: "h", Reason: store.ReasonAnswered, At: old, Event: store.Event{Seq: 2, At: old, Type: store.EventAnswered, Host: "h"}}); err != nil || !won {
		t.Fatalf("claim: %v %v", won, err)
	}
	insert(t, a, bridgeRecord("d-open", "gone-open", "s", old))
	res, err := p.Prune(ctx, cut)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bridges != 2 || res.Decisions != 1 {
		t.Errorf("prune result %+v, want 1 decision and 2 bridges", res)
	}
	got, err := b.Bridges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, br := range got {
		ids = append(ids, br.ID)
	}
	if !reflect.DeepEqual(ids, []string{"gone-open", "live"}) {
		t.Errorf("bridges after prune: %v, want gone-open and live", ids)
	}
	if err := b.Heartbeat(ctx, "gone", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("heartbeat of a pruned bridge: %v, want ErrNotFound", err)
	}
}

func bridgeRecord(id, bridge, session string, at time.Time) store.Record {
	r := openRecord(id, session, at)
	r.BridgeID = bridge
	return r
}

// sessionsKeyedByBridge: the same session id in two bridges is two rows,
// ListOf returns only the named bridge's decisions, and SessionsOf of one
// session id returns only that session's rows.
func sessionsKeyedByBridge(t *testing.T, a, b store.Shared) {
	ctx := context.Background()
	at := time.Now().UTC()
	insert(t, a, bridgeRecord("a1", "A", "sess-1", at))
	insert(t, a, bridgeRecord("a2", "A", "sess-1", at.Add(time.Millisecond)))
	insert(t, b, bridgeRecord("b1", "B", "sess-1", at.Add(2*time.Millisecond)))
	rows, err := b.SessionsOf(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.SessionRow{
		{BridgeID: "A", SessionID: "sess-1", OpenDecisions: 2, Decisions: 2, LastActivity: at.Add(time.Millisecond)},
		{BridgeID: "B", SessionID: "sess-1", OpenDecisions: 1, Decisions: 1, LastActivity: at.Add(2 * time.Millisecond)},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("sessions\n got %+v\nwant %+v", rows, want)
	}
	// NewestOf: each pair's newest decision, as ListOf(bridge, session, 1);
	// a pair without decisions left out.
	if nr, ok := b.(store.NewestReader); ok {
		got, err := nr.NewestOf(ctx, []store.SessionPair{{BridgeID: "A", SessionID: "sess-1"}, {BridgeID: "B", SessionID: "sess-1"}, {BridgeID: "A", SessionID: "nope"}})
		if err != nil {
			t.Fatal(err)
		}
		ids := map[store.SessionPair]string{}
		for k, r := range got {
			ids[k] = r.ID
		}
		if want := map[store.SessionPair]string{{BridgeID: "A", SessionID: "sess-1"}: "a2", {BridgeID: "B", SessionID: "sess-1"}: "b1"}; !reflect.DeepEqual(ids, want) {
			t.Fatalf("NewestOf: %v, want %v", ids, want)
		}
	}
	// One session's rows: only that session's, one per bridge that has it.
	insert(t, a, bridgeRecord("a3", "A", "sess-2", at.Add(3*time.Millisecond)))
	for sid, want := range map[string][]store.SessionRow{
		"sess-1": want,
		"sess-2": {{BridgeID: "A", SessionID: "sess-2", OpenDecisions: 1, Decisions: 1, LastActivity: at.Add(3 * time.Millisecond)}},
		"sess-9": {},
	} {
		got, err := b.SessionsOf(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("SessionsOf(%q)\n got %+v\nwant %+v", sid, got, want)
		}
	}
	for bridge, ids := range map[string][]string{"A": {"a1", "a2"}, "B": {"b1"}, "": {"a1", "a2", "b1"}} {
		recs, err := a.ListOf(ctx, bridge, "sess-1", 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.ID)
			if bridge != "" && r.BridgeID != bridge {
				t.Errorf("ListOf(%q) returned %s of bridge %q", bridge, r.ID, r.BridgeID)
			}
		}
		if !reflect.DeepEqual(got, ids) {
			t.Errorf("ListOf(%q) = %v, want %v", bridge, got, ids)
		}
	}
	if got, err := b.Get(ctx, "a1"); err != nil || got.BridgeID != "A" {
		t.Fatalf("get a1: bridge %q, err %v", got.BridgeID, err)
	}
}

// claimWakesOwner: a claim through b of a decision a opened (Seq 0: no
// journal event) wakes a's Watch, shows in a's Unsettled until delivered,
// and Reclose moves it once from answered to the owner's verdict.
func claimWakesOwner(t *testing.T, a, b store.Shared) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woke := make(chan struct{}, 1)
	watching := make(chan error, 1)
	go func() {
		watching <- a.Watch(ctx, func(id string) {
			if id != "" && id != "d1" && !strings.HasPrefix(id, "warm-") {
				t.Errorf("watch called for %q, want d1 or \"\"", id)
			}
			select {
			case woke <- struct{}{}:
			default:
			}
		})
	}()
	at := time.Now().UTC()
	warmUp(t, a, b, woke)
	insert(t, a, bridgeRecord("d1", "A", "s", at))
	if ids, err := a.Unsettled(ctx, "A"); err != nil || len(ids) != 0 {
		t.Fatalf("unsettled while open: %v %v", ids, err)
	}
	drain(woke)
	won, err := b.Claim(ctx, "d1", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
		By: "http@B", Reason: store.ReasonAnswered, At: at})
	if err != nil || !won {
		t.Fatalf("claim: %v %v", won, err)
	}
	select {
	case <-woke:
	case <-time.After(5 * time.Second):
		t.Fatal("a's Watch was not called after b's claim")
	}
	rec, err := a.Get(ctx, "d1")
	if err != nil || len(rec.Events) != 1 || rec.Status != store.StatusAnswered {
		t.Fatalf("after a Seq-0 claim: status %s, %d events (want answered, only opened), err %v", rec.Status, len(rec.Events), err)
	}
	if ids, err := a.Unsettled(ctx, "A"); err != nil || !reflect.DeepEqual(ids, []string{"d1"}) {
		t.Fatalf("unsettled: %v %v, want [d1]", ids, err)
	}
	stale := store.Transition{Status: store.StatusCancelled, Reason: store.ReasonStale, At: at,
		Event: store.Event{Seq: 2, At: at, Type: store.EventCancelled, Detail: "stale"}}
	for i, want := range []bool{true, false} {
		if got, err := a.Reclose(ctx, "d1", stale); err != nil || got != want {
			t.Fatalf("reclose %d: %v %v, want %v", i, got, err, want)
		}
	}
	if err := a.Append(ctx, "d1", store.Event{Seq: 3, At: at, Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	if ids, err := a.Unsettled(ctx, "A"); err != nil || len(ids) != 0 {
		t.Fatalf("unsettled after delivery: %v %v", ids, err)
	}
	cancel()
	if err := <-watching; err != nil {
		t.Fatalf("watch: %v", err)
	}
}

// ownerLost: the open decisions of a bridge whose heartbeat is older than
// the cutoff end cancelled(owner_lost) with a journal event, a live
// bridge's stay open, and a later claim loses.
func ownerLost(t *testing.T, a, b store.Shared) {
	ctx := context.Background()
	now := time.Now().UTC()
	for _, br := range []store.Bridge{bridgeAt("A", now.Add(-time.Minute)), bridgeAt("B", now)} {
		if err := a.RegisterBridge(ctx, br); err != nil {
			t.Fatal(err)
		}
	}
	insert(t, a, bridgeRecord("a1", "A", "s", now))
	insert(t, b, bridgeRecord("b1", "B", "s", now))
	// a2 and a3: answers claimed by another process; a2's owner died
	// before it took it, a3's was delivered; a4's claim is newer than the
	// cutoff (the owner may still take it).
	for i, at := range []time.Time{now.Add(-time.Minute), now.Add(-time.Minute), now} {
		id := "a" + strconv.Itoa(i+2)
		insert(t, a, bridgeRecord(id, "A", "s", now.Add(-2*time.Minute)))
		if won, err := b.Claim(ctx, id, store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
			By: "h@inbox", Reason: store.ReasonAnswered, At: at}); err != nil || !won {
			t.Fatalf("claim %s: won %v, err %v", id, won, err)
		}
	}
	if err := a.Append(ctx, "a3", store.Event{Seq: 2, At: now.Add(-time.Minute), Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	var audited []store.Record
	ids, err := b.LoseOwners(ctx, now.Add(-10*time.Second), now, func(rec store.Record) (store.PlanItem, bool) {
		audited = append(audited, rec)
		return store.PlanItem{ID: rec.ID, SessionID: rec.SessionID, DecidedAt: now, Item: json.RawMessage(`{"lost":true}`)}, rec.ID == "a1"
	})
	slices.Sort(ids)
	if err != nil || !reflect.DeepEqual(ids, []string{"a1", "a2"}) {
		t.Fatalf("lose owners: %v %v, want [a1 a2]", ids, err)
	}
	// The audit rows are written in LoseOwners' transaction, from the
	// records as closed: a1's (audit said yes) is there, a2's is not.
	if len(audited) != 2 || audited[0].Status != store.StatusCancelled || audited[0].Reason != store.ReasonOwnerLost || len(audited[0].Snapshot) == 0 {
		t.Fatalf("records given to audit: %+v", audited)
	}
	if items, err := b.PlanItems(ctx, "", 10); err != nil || len(items) != 1 || items[0].ID != "a1" || string(items[0].Item) != `{"lost":true}` {
		t.Fatalf("audit rows after lose owners: %+v, %v; want a1's", items, err)
	}
	rec2, err := a.Get(ctx, "a2")
	if err != nil {
		t.Fatal(err)
	}
	if rec2.Status != store.StatusCancelled || rec2.Reason != store.ReasonOwnerLost || rec2.Answer != nil {
		t.Fatalf("a2, claimed and never delivered: %s/%s answer %+v, want cancelled/owner_lost without an answer", rec2.Status, rec2.Reason, rec2.Answer)
	}
	for _, id := range []string{"a3", "a4"} {
		if rec, _ := a.Get(ctx, id); rec.Status != store.StatusAnswered || rec.Answer == nil {
			t.Fatalf("%s: %s, want answered (delivered, or claimed after the cutoff)", id, rec.Status)
		}
	}
	rec, err := a.Get(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	last := rec.Events[len(rec.Events)-1]
	if rec.Status != store.StatusCancelled || rec.Reason != store.ReasonOwnerLost || last.Type != store.EventCancelled || last.Detail != string(store.ReasonOwnerLost) {
		t.Fatalf("a1: %s/%s, last event %+v", rec.Status, rec.Reason, last)
	}
	if won, err := b.Claim(ctx, "a1", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
		By: "h", Reason: store.ReasonAnswered, At: now}); err != nil || won {
		t.Fatalf("claim of an owner_lost decision: won %v, err %v", won, err)
	}
	if rec, _ := a.Get(ctx, "b1"); rec.Status != store.StatusOpen {
		t.Fatalf("b1 of a live bridge: %s", rec.Status)
	}
}

// warmUp claims decisions of bridge W through b until a's Watch, started
// concurrently, has seen one: it then listens.
func warmUp(t *testing.T, a, b store.Shared, woke chan struct{}) {
	t.Helper()
	for i := range 50 {
		id := "warm-" + strconv.Itoa(i)
		insert(t, a, bridgeRecord(id, "W", "s", time.Now()))
		if _, err := b.Claim(context.Background(), id, store.Transition{Status: store.StatusCancelled, Reason: store.ReasonTimeout, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woke:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("a's Watch never saw a claim")
}

func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// ownerLostWithoutRow: the decisions of a bridge with no registry row (its
// row was pruned; it inserted them before its next heartbeat registered it
// again, then died) are swept as a gone bridge's are, once they are older
// than the cutoff: the open one and the claimed, undelivered one; one
// newer than the cutoff (a bridge inserting while it registers) is not.
func ownerLostWithoutRow(t *testing.T, a, b store.Shared) {
	ctx := context.Background()
	now := time.Now().UTC()
	old := now.Add(-time.Minute)
	insert(t, a, bridgeRecord("ghost-open", "ghost", "s", old))
	insert(t, a, bridgeRecord("ghost-claimed", "ghost", "s", old))
	if won, err := b.Claim(ctx, "ghost-claimed", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
		By: "h@inbox", Reason: store.ReasonAnswered, At: old}); err != nil || !won {
		t.Fatalf("claim: won %v, err %v", won, err)
	}
	insert(t, a, bridgeRecord("new-open", "starting", "s", now))
	ids, err := b.LoseOwners(ctx, now.Add(-10*time.Second), now, nil)
	slices.Sort(ids)
	if err != nil || !reflect.DeepEqual(ids, []string{"ghost-claimed", "ghost-open"}) {
		t.Fatalf("lose owners: %v %v, want [ghost-claimed ghost-open]", ids, err)
	}
	for id, want := range map[string]store.Status{"ghost-open": store.StatusCancelled, "ghost-claimed": store.StatusCancelled, "new-open": store.StatusOpen} {
		got, err := a.Get(ctx, id)
		if err != nil || got.Status != want || (want == store.StatusCancelled && (got.Reason != store.ReasonOwnerLost || got.Answer != nil)) {
			t.Errorf("%s after the sweep: %s %s answer %+v (%v), want %s", id, got.Status, got.Reason, got.Answer, err, want)
		}
	}
}
