package confirm_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// TestSessionListReadsOnlySessionsThatMoved: another bridge's session is
// listed with the working directory of its newest stored decision, which
// AllSessions reads only for a session with a decision newer than the
// previous list saw (several in one NewestOf, one with ListOf): a page
// asking every second reads one index scan, not every session's newest
// decision at every ask.
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
	if n := hook.batches.Load(); n != 1 {
		t.Fatalf("%d NewestOf calls for the first list of 2 sessions, want 1", n)
	}
	list(2, map[string]string{"sess-1": "/repo1", "sess-2": "/repo2"}) // nothing moved: nothing read
	askIn("sess-2", "k3", "/repo2/sub")
	list(3, map[string]string{"sess-1": "/repo1", "sess-2": "/repo2/sub"}) // only sess-2's newest
}

// TestSessionListsAskedAtOnceReadOnce: two lists asked at once on a cold
// cache (two pages polling, the first list after a start) read each
// session's newest decision once, not once each: the second waits for
// the first. The first list's first read is held until the second list
// either reads too (it did not wait: the test fails) or has had 200 ms to.
func TestSessionListsAskedAtOnceReadOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{}) // shared_test.go
	hook := &readHook{}
	b := sharedBroker(t, path, "B", confirm.Options{Store: hook})
	ide := newHost("ide")
	for _, sid := range []string{"sess-1", "sess-2"} {
		ch := ask(a, req(sid, "k-"+sid), ide)
		d := ide.wait(t)
		defer func() {
			_, _, _ = a.Answer(context.Background(), sid, d.ID(), "ide", confirm.Answer{OptionID: "reject-once"})
			await(t, ch)
		}()
	}
	hook.listed, hook.hold = make(chan struct{}, 8), make(chan struct{})
	errs := make(chan error, 2)
	list := func() {
		_, err := b.AllSessions(context.Background())
		errs <- err
	}
	go list()
	<-hook.listed // the first list's first read, held
	go list()
	select {
	case <-hook.listed: // the second list read at once: it did not wait
	case <-time.After(200 * time.Millisecond):
	}
	close(hook.hold)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := hook.lists.Load(); n != 2 {
		t.Fatalf("%d decisions read for the cwd of 2 sessions by 2 lists asked at once, want 2", n)
	}
}
