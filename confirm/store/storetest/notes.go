package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// notesAndClaimPerson: a claim through b keeps its Person on the row (a
// reads it), and notes b adds for a's decisions are taken by a's bridge,
// oldest first, exactly once, each waking a's Watch; notes of another
// bridge's decisions are not a's.
func notesAndClaimPerson(t *testing.T, a, b store.Shared) {
	ctx := context.Background()
	an, aok := a.(store.Notes)
	bn, bok := b.(store.Notes)
	if !aok || !bok {
		t.Fatal("a shared store implements store.Notes")
	}
	at := time.Now().UTC()
	insert(t, a, bridgeRecord("a1", "A", "sess-1", at))
	insert(t, a, bridgeRecord("a2", "A", "sess-1", at))
	insert(t, b, bridgeRecord("b1", "B", "sess-1", at))
	woke := make(chan struct{}, 1)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- a.Watch(wctx, func(string) {
			select {
			case woke <- struct{}{}:
			default:
			}
		})
	}()
	defer func() { cancel(); <-done }()
	warmUp(t, a, b, woke) // shared.go
	drain(woke)

	ev := func(n int, person string) store.Event {
		return store.Event{At: at.Add(time.Duration(n) * time.Millisecond), Type: store.EventInvalidAnswer, Host: "http@inbox", Person: person, Detail: "forbidden"}
	}
	if err := bn.AddNote(ctx, "a1", ev(1, "olga")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("a note did not wake the owner's Watch")
	}
	for _, n := range []struct {
		id string
		ev store.Event
	}{{"a2", ev(2, "")}, {"b1", ev(3, "bob")}, {"nope", ev(4, "x")}} {
		if err := bn.AddNote(ctx, n.id, n.ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := an.TakeNotes(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Note{{DecisionID: "a1", Event: ev(1, "olga")}, {DecisionID: "a2", Event: ev(2, "")}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("notes of A\n got %+v\nwant %+v", got, want)
	}
	if again, err := bn.TakeNotes(ctx, "A"); err != nil || len(again) != 0 {
		t.Fatalf("notes taken twice: %+v %v", again, err)
	}
	if nb, err := bn.TakeNotes(ctx, "B"); err != nil || len(nb) != 1 || nb[0].DecisionID != "b1" {
		t.Fatalf("notes of B: %+v %v", nb, err)
	}

	won, err := b.Claim(ctx, "a1", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
		By: "http@inbox", Person: "alice", Reason: store.ReasonAnswered, At: at})
	if err != nil || !won {
		t.Fatalf("claim: %v %v", won, err)
	}
	r, err := a.Get(ctx, "a1")
	if err != nil || r.Person != "alice" || r.ResolvedBy != "http@inbox" {
		t.Fatalf("claimed row: person %q by %q, err %v", r.Person, r.ResolvedBy, err)
	}
}
