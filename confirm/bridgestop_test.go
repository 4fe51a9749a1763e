package confirm_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// TestACleanlyStoppedBridgeIsNotLiveAtOnce: bridges A and B both have
// session sess-1 in the store (B as a bridge restarted on it would); once
// A's RunShared returns (a clean stop) a third bridge, whose registry read
// from before the stop still says A is live, names A not live at once,
// well within the 10s lease a bridge that died keeps: the route of
// sess-1 then means B instead of refusing with 409.
func TestACleanlyStoppedBridgeIsNotLiveAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	sa, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	a := newBroker(t, confirm.Options{Store: sa, BridgeID: "A"})
	ctx, stop := context.WithCancel(context.Background())
	stopped, registered := make(chan error, 1), make(chan struct{})
	go func() {
		stopped <- a.RunShared(ctx, confirm.SharedOptions{Bridge: store.Bridge{ID: "A", Started: time.Now(), Heartbeat: time.Now()},
			Registered: func() { close(registered) }})
	}()
	sharedBroker(t, path, "B", confirm.Options{}) // shared_test.go
	c := sharedBroker(t, path, "C", confirm.Options{})
	for _, bridge := range []string{"A", "B"} {
		now := time.Now().UTC()
		if _, _, err := sa.Insert(context.Background(), store.Record{ID: "d-" + bridge, SessionID: "sess-1", AgentKey: bridge, BridgeID: bridge,
			Request: []byte(`{}`), Snapshot: json.RawMessage(`{}`), Status: store.StatusOpen, CreatedAt: now, Deadline: now.Add(time.Hour),
			Events: []store.Event{{Seq: 1, At: now, Type: store.EventOpened}}}); err != nil {
			t.Fatal(err)
		}
	}
	live := func() map[string]bool {
		t.Helper()
		refs, err := c.SessionBridges(context.Background(), "sess-1")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, r := range refs {
			out[r.ID] = r.Live
		}
		return out
	}
	<-registered // A's row is stored
	// B's RunShared registers it in its own time: store its row now too.
	if err := sa.RegisterBridge(context.Background(), store.Bridge{ID: "B", Name: "name-B", Started: time.Now(), Heartbeat: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if got := live(); !got["A"] || !got["B"] {
		t.Fatalf("bridges of sess-1 before the stop: %v, want A and B live", got)
	}
	stop()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if got := live(); got["A"] || !got["B"] {
		t.Fatalf("bridges of sess-1 after A stopped: %v, want A not live and B live", got)
	}
	// The session list (no route to choose) reads the set of live bridges
	// once it is a second old: then A is not live there either.
	confirm.ExpireLiveBridges(c)
	all, err := c.AllSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Bridge != nil && s.Bridge.Live != (s.Bridge.ID == "B" || s.Bridge.ID == "C") {
			t.Errorf("session %s of bridge %s listed live=%v after A stopped", s.SessionID, s.Bridge.ID, s.Bridge.Live)
		}
	}
}
