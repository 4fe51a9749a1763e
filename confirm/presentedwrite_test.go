package confirm_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

// all returns the writes logged so far.
func (w *writeLog) all() []loggedWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes)
}

// storedTypes returns "type@host" for each event of decision id's stored
// journal.
func storedTypes(t *testing.T, s store.Store, id string) []string {
	t.Helper()
	rec, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range rec.Events {
		out = append(out, string(ev.Type)+"@"+ev.Host)
	}
	return out
}

// A decision answered soon after it was presented stores its presented
// events with its closing: one write, the presented events first.
func TestPresentedEventsShareTheClosingWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &writeLog{Store: memStore(t)}
		b := newBroker(t, confirm.Options{Store: w})
		ide, page := newHost("ide"), newHost("page")
		ch := ask(b, req("s", "k"), ide, page)
		d := ide.wait(t)
		page.wait(t)
		synctest.Wait() // both presented events are recorded
		if _, _, err := b.Answer(context.Background(), d.SessionID(), d.ID(), "page", confirm.Answer{OptionID: "allow-once"}); err != nil {
			t.Fatal(err)
		}
		jsonEq(t, await(t, ch).result, selected("allow-once"))
		var closing []string
		for _, write := range w.all() {
			presented := count(write.events, "presented@ide") + count(write.events, "presented@page")
			if presented > 0 && write.kind != "closing" {
				t.Errorf("a write of presented events apart from the closing: %v (all: %v)", write, w.all())
			}
			if write.kind == "closing" {
				closing = write.events
			}
		}
		if len(closing) < 2 || closing[0] != "presented@ide" || closing[1] != "presented@page" {
			t.Errorf("the closing write %v: want the presented events first", closing)
		}
		journal := storedTypes(t, w, d.ID())
		if count(journal, "presented@ide") != 1 || count(journal, "presented@page") != 1 {
			t.Fatalf("stored journal %v: want both presented events once", journal)
		}
	})
}

// A decision that stays open stores its presented events on their own once
// presentedWriteDelay (one second) has passed, and its closing does not
// store them again.
func TestPresentedEventsOfAnOpenDecisionAreStoredWithinASecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &writeLog{Store: memStore(t)}
		b := newBroker(t, confirm.Options{Store: w})
		ide := newHost("ide")
		r := req("s", "k")
		r.Timeout = time.Minute
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.Ask(context.Background(), r, []confirm.Presenter{ide})
		}()
		d := ide.wait(t)
		synctest.Wait()
		if journal := storedTypes(t, w, d.ID()); count(journal, "presented@ide") != 0 {
			t.Fatalf("stored journal %v right after presenting: the presented event should wait for the next write", journal)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if journal := storedTypes(t, w, d.ID()); count(journal, "presented@ide") != 1 {
			t.Fatalf("stored journal %v a second after presenting: want the presented event", journal)
		}
		<-done // times out after the minute
		presentedWrites := 0
		for _, write := range w.all() {
			presentedWrites += count(write.events, "presented@ide")
		}
		if presentedWrites != 1 {
			t.Fatalf("writes %v: the presented event was written %d times, want once", w.all(), presentedWrites)
		}
	})
}

// A bridge that stops within the second stores the presented events of
// its open decisions with their closing (bridge_shutdown).
func TestPresentedEventsAreStoredAtShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &writeLog{Store: memStore(t)}
		b := newBroker(t, confirm.Options{Store: w})
		ctx, stop := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() { defer close(ran); b.Run(ctx) }()
		ide := newHost("ide")
		go b.Ask(context.Background(), req("s", "k"), []confirm.Presenter{ide})
		d := ide.wait(t)
		synctest.Wait()
		stop()
		<-ran
		journal := storedTypes(t, w, d.ID())
		if count(journal, "presented@ide") != 1 || count(journal, "cancelled@") != 1 {
			t.Fatalf("stored journal %v after shutdown: want the presented event and the cancellation", journal)
		}
	})
}

// A write of an open decision within the second (a host abstaining)
// stores the presented events kept for it first, in seq order, and the
// timer then has nothing left to store.
func TestPresentedEventsRideTheNextWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &writeLog{Store: memStore(t)}
		b := newBroker(t, confirm.Options{Store: w})
		ide, page := newHost("ide"), newHost("page")
		r := req("s", "k")
		r.Timeout = time.Minute
		ch := ask(b, r, ide, page)
		d := ide.wait(t)
		page.wait(t)
		synctest.Wait()
		b.Abstain(d.ID(), "ide", "disconnected")
		writes := w.all()
		if len(writes) == 0 {
			t.Fatal("no write")
		}
		last := writes[len(writes)-1]
		if want := []string{"presented@ide", "presented@page", "abstained@ide"}; !slices.Equal(last.events, want) {
			t.Fatalf("the abstention's write %v, want %v", last.events, want)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := len(w.all()); n != len(writes) {
			t.Fatalf("writes after the second: %v, want none", w.all()[len(writes):])
		}
		if journal := storedTypes(t, w, d.ID()); count(journal, "presented@ide") != 1 || count(journal, "presented@page") != 1 {
			t.Fatalf("stored journal %v", journal)
		}
		b.Abstain(d.ID(), "page", "disconnected") // no eligible host left: the decision closes
		await(t, ch)
	})
}
