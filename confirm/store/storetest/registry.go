package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// RunRegistry runs the conformance suite of [store.Registry] against
// stores made by newStore (empty, living until the test ends); newPair,
// when not nil, returns two instances on one empty database, as two
// bridges have.
func RunRegistry(t *testing.T, newStore func(t *testing.T) store.Registry,
	newPair func(t *testing.T) (store.Registry, store.Registry)) {
	t.Run("RegisterReplacesByID", func(t *testing.T) { registerReplaces(t, newStore(t)) })
	t.Run("HeartbeatNeverMovesBack", func(t *testing.T) { heartbeat(t, newStore(t)) })
	t.Run("StopBridgeUntilRegisteredAgain", func(t *testing.T) { stopBridge(t, newStore(t)) })
	if newPair != nil {
		t.Run("BridgesOfBothInstances", func(t *testing.T) {
			a, b := newPair(t)
			bridgesShared(t, a, b)
		})
	}
}

func bridgeAt(id string, at time.Time) store.Bridge {
	return store.Bridge{ID: id, Name: "n-" + id, Host: "box", Agent: []string{"agent", "--flag", "a b"},
		Cwd: "/w/" + id, PID: 4242, Started: at, Heartbeat: at}
}

// registerReplaces: every field comes back as registered (times in UTC
// with nanoseconds), ordered by Started; a second registration of an ID
// replaces the row.
func registerReplaces(t *testing.T, r store.Registry) {
	ctx := context.Background()
	if got, err := r.Bridges(ctx); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("bridges of an empty store: %v, err %v (want an empty result)", got, err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.FixedZone("X", 3600))
	for _, b := range []store.Bridge{bridgeAt("b2", at.Add(time.Second)), bridgeAt("b1", at), bridgeAt("b2", at.Add(2*time.Second))} {
		if err := r.RegisterBridge(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Bridges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Bridge{bridgeAt("b1", at.UTC()), bridgeAt("b2", at.Add(2*time.Second).UTC())}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bridges\n got %+v\nwant %+v", got, want)
	}
}

// heartbeat: a later heartbeat is stored, an earlier one is not, and an
// unknown bridge is ErrNotFound.
func heartbeat(t *testing.T, r store.Registry) {
	ctx := context.Background()
	at := time.Now().UTC()
	if err := r.RegisterBridge(ctx, bridgeAt("b1", at)); err != nil {
		t.Fatal(err)
	}
	for _, beat := range []time.Time{at.Add(3 * time.Second), at.Add(time.Second)} {
		if err := r.Heartbeat(ctx, "b1", beat); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Bridges(ctx)
	if err != nil || len(got) != 1 || !got[0].Heartbeat.Equal(at.Add(3*time.Second)) {
		t.Fatalf("after heartbeats: %+v, err %v", got, err)
	}
	if err := r.Heartbeat(ctx, "nope", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("heartbeat of an unknown bridge: %v", err)
	}
}

// bridgesShared: bridges registered through either instance are listed by
// both.
func bridgesShared(t *testing.T, a, b store.Registry) {
	ctx := context.Background()
	at := time.Now().UTC()
	if err := a.RegisterBridge(ctx, bridgeAt("ba", at)); err != nil {
		t.Fatal(err)
	}
	if err := b.RegisterBridge(ctx, bridgeAt("bb", at.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	for _, r := range []store.Registry{a, b} {
		got, err := r.Bridges(ctx)
		if err != nil || len(got) != 2 || got[0].ID != "ba" || got[1].ID != "bb" {
			t.Fatalf("bridges: %+v, err %v", got, err)
		}
	}
}

// stopBridge: StopBridge sets Stopped and moves Heartbeat to the stop
// (never back); LiveBridges leaves a stopped bridge out, and one whose
// heartbeat is older than its since; a registration of the same id clears
// Stopped; an unknown id is ErrNotFound.
func stopBridge(t *testing.T, r store.Registry) {
	ctx := context.Background()
	at := time.Now().UTC()
	if err := r.RegisterBridge(ctx, bridgeAt("b1", at)); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterBridge(ctx, bridgeAt("b2", at)); err != nil {
		t.Fatal(err)
	}
	if err := r.StopBridge(ctx, "b1", at.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err := r.Bridges(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("bridges: %+v, %v", got, err)
	}
	if b1, b2 := got[0], got[1]; !b1.Stopped.Equal(at.Add(5*time.Second)) || !b1.Heartbeat.Equal(at.Add(5*time.Second)) || !b2.Stopped.IsZero() {
		t.Fatalf("after b1 stopped: %+v and %+v; want b1 stopped (and its heartbeat) at %v, b2 running", b1, b2, at.Add(5*time.Second))
	}
	live, err := r.LiveBridges(ctx, at)
	if err != nil || !reflect.DeepEqual(live, []string{"b2"}) {
		t.Fatalf("live bridges since %v: %v, %v; want b2 (b1 stopped)", at, live, err)
	}
	if live, err := r.LiveBridges(ctx, at.Add(time.Second)); err != nil || len(live) != 0 {
		t.Fatalf("live bridges since a second after b2's heartbeat: %v, %v; want none", live, err)
	}
	if err := r.StopBridge(ctx, "nope", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("stop of an unknown bridge: %v", err)
	}
	if err := r.RegisterBridge(ctx, bridgeAt("b1", at.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Bridges(ctx); err != nil || len(got) != 2 || !got[0].Stopped.IsZero() || !got[1].Stopped.IsZero() {
		t.Fatalf("after b1 registered again: %+v, %v; want neither stopped", got, err)
	}
}
