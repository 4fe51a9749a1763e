package confirm_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// inboxBroker opens path as its own store and runs an "acpmux inbox"
// broker (Options.Inbox, no bridge of its own) on it until the test ends.
func inboxBroker(t *testing.T, path string) *confirm.Broker {
	t.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newBroker(t, confirm.Options{Store: s, Inbox: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.RunShared(ctx, confirm.SharedOptions{}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		s.Close()
	})
	return b
}

// journalOf waits (bounded) until decision id's journal at b has an event
// of type typ, and returns it.
func journalOf(t *testing.T, d *confirm.Decision, typ store.EventType) store.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, ev := range d.View().Events {
			if ev.Type == typ {
				return ev
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s event in the journal of %s: %+v", typ, d.ID(), d.View().Events)
	return store.Event{}
}

// TestInboxAnswersRecordThePerson: an observer's answer at the inbox to
// bridge A's decision is refused, and A journals the refusal
// (invalid_answer) with the observer's name; an approver's answer at the
// inbox wins, and A's answered event, A's view and the inbox's view name
// the approver (answeredBy), as for an answer at A's own API.
func TestInboxAnswersRecordThePerson(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	inbox := inboxBroker(t, path)
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)

	olga := identity.WithPerson(context.Background(), identity.Person{Name: "olga", Role: store.RoleObserver})
	if _, _, err := inbox.Answer(olga, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); !errors.Is(err, confirm.ErrForbidden) {
		t.Fatalf("observer at the inbox: %v, want ErrForbidden", err)
	}
	if ev := journalOf(t, d, store.EventInvalidAnswer); ev.Person != "olga" || ev.Host != "http@inbox" {
		t.Fatalf("A's journal of the observer's refused answer: %+v", ev)
	}

	alice := identity.WithPerson(context.Background(), identity.Person{Name: "alice", Role: store.RoleApprover})
	v, _, err := inbox.Answer(alice, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if err != nil {
		t.Fatalf("approver at the inbox: %v", err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	if ev := journalOf(t, d, store.EventAnswered); ev.Person != "alice" {
		t.Fatalf("A's answered event: %+v, want person alice", ev)
	}
	if got := d.View().AnsweredBy; got != "alice" {
		t.Errorf("A's view: answeredBy %q, want alice", got)
	}
	if v.AnsweredBy != "alice" {
		t.Errorf("the inbox's view of its answer: answeredBy %q, want alice", v.AnsweredBy)
	}
	iv, err := inbox.Decision(context.Background(), "sess-1", d.ID())
	if err != nil || iv.AnsweredBy != "alice" {
		t.Errorf("the inbox's view afterwards: answeredBy %q (%v), want alice", iv.AnsweredBy, err)
	}
}
