package confirm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/acpmux/acpmux/confirm"
)

// TestSessionListReadsOnlySessionsThatMoved: another bridge's session is
// listed with the working directory of its newest stored decision, which
// AllSessions reads (ListOf) only for a session with a decision newer than
// the previous list saw: a page asking every second reads one index scan,
// not every session's newest decision at every ask.
func TestSessionListReadsOnlySessionsThatMoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{}) // shared_test.go
	hook := &readHook{}
	b := sharedBroker(t, path, "B", confirm.Options{Store: hook})
	ide := newHost("ide")
	var open []func()
	defer func() { // answer them: no Ask outlives the test
		for _, f := range open {
			f()
		}
	}()
	askIn := func(sid, key, cwd string) {
		t.Helper()
		r := req(sid, key)
		r.Cwd = cwd
		ch := ask(a, r, ide)
		d := ide.wait(t) // stored before it is presented
		open = append(open, func() {
			// sess-2's first is stale by then (its session moved to
			// /repo2/sub): closed already, which ends its Ask too.
			_, _, _ = a.Answer(context.Background(), sid, d.ID(), "ide", confirm.Answer{OptionID: "reject-once"})
			await(t, ch)
		})
	}
	askIn("sess-1", "k1", "/repo1")
	askIn("sess-2", "k2", "/repo2")
	list := func(wantLists int64, want map[string]string) {
		t.Helper()
		all, err := b.AllSessions(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range all {
			if s.Bridge == nil || s.Bridge.ID != "A" {
				t.Fatalf("session %s of bridge %+v, want A's only", s.SessionID, s.Bridge)
			}
			got[s.SessionID] = s.Cwd
		}
		if len(got) != len(want) || got["sess-1"] != want["sess-1"] || got["sess-2"] != want["sess-2"] {
			t.Fatalf("sessions and their cwd: %v, want %v", got, want)
		}
		if n := hook.lists.Load(); n != wantLists {
			t.Fatalf("%d decisions read for the cwd of the sessions so far, want %d", n, wantLists)
		}
	}
	list(2, map[string]string{"sess-1": "/repo1", "sess-2": "/repo2"})
	list(2, map[string]string{"sess-1": "/repo1", "sess-2": "/repo2"}) // nothing moved: nothing read
	askIn("sess-2", "k3", "/repo2/sub")
	list(3, map[string]string{"sess-1": "/repo1", "sess-2": "/repo2/sub"}) // only sess-2's newest
}
