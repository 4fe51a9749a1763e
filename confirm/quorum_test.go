package confirm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

const quorumPolicy = `
[[rule]]
name = "two-of-three"
decision = "ask"
command = "ls *"
approvers = ["alice", "bob", "carol"]
quorum = 2
requester_may_approve = false
`

func as(name string, role store.Role) context.Context {
	return identity.WithPerson(context.Background(), identity.Person{Name: name, Role: role})
}

func approver(name string) context.Context { return as(name, store.RoleApprover) }

// quorumBroker opens one decision under quorumPolicy (requested by
// "rita") with a file store, presented to host ide.
func quorumBroker(t *testing.T) (*confirm.Broker, *fakeHost, *confirm.Decision, <-chan askResult) {
	t.Helper()
	b := newBroker(t, confirm.Options{Store: fileStore(t), Policy: mustPolicy(t, quorumPolicy)})
	ide := newHost("ide")
	r := req("s", "1")
	r.Requester = "rita"
	ch := ask(b, r, ide)
	return b, ide, ide.wait(t), ch
}

func answerAs(ctx context.Context, b *confirm.Broker, d *confirm.Decision, opt string) (confirm.View, error) {
	v, _, err := b.Answer(ctx, "s", d.ID(), "http", confirm.Answer{OptionID: opt})
	return v, err
}

// TestQuorumNeedsTwoDistinctApprovers: one approver's allow is a vote and
// the decision stays open; the same person again, a non-approver, an
// observer and an answer without a person are refused, journalled with
// the person, and not counted; a second approver's allow answers the agent
// once and withdraws the other host.
func TestQuorumNeedsTwoDistinctApprovers(t *testing.T) {
	b, ide, d, ch := quorumBroker(t)
	if v, err := answerAs(approver("alice"), b, d, "allow-once"); err != nil || v.Status != store.StatusOpen {
		t.Fatalf("first vote: %v, status %s; want nil, open", err, v.Status)
	}
	refusals := []struct {
		ctx  context.Context
		want error
	}{
		{approver("alice"), store.ErrDuplicateVote},
		{approver("dave"), confirm.ErrForbidden},
		{as("carol", store.RoleObserver), confirm.ErrForbidden},
		{context.Background(), confirm.ErrForbidden},
	}
	for _, r := range refusals {
		if _, err := answerAs(r.ctx, b, d, "allow-once"); !errors.Is(err, r.want) {
			t.Fatalf("refused vote: %v, want %v", err, r.want)
		}
	}
	select {
	case r := <-ch:
		t.Fatalf("the agent was answered before the quorum: %s", r.result)
	default:
	}
	v, err := answerAs(approver("bob"), b, d, "allow-once")
	if err != nil || v.Status != store.StatusAnswered || v.AnsweredBy != "bob" {
		t.Fatalf("second vote: %v, status %s, answeredBy %q", err, v.Status, v.AnsweredBy)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	if len(ide.withdrawals()) != 1 {
		t.Fatalf("ide withdrawals %d, want 1", len(ide.withdrawals()))
	}
	var votes, invalid []string
	for _, ev := range v.Events {
		switch ev.Type {
		case store.EventVote:
			votes = append(votes, ev.Person+":"+ev.Detail)
		case store.EventInvalidAnswer:
			invalid = append(invalid, ev.Person)
		}
	}
	if fmt.Sprint(votes) != "[alice:allow-once (1 of 2) bob:allow-once (2 of 2)]" || fmt.Sprint(invalid) != "[alice dave carol ]" {
		t.Fatalf("journal votes %v, refusals %v", votes, invalid)
	}
}

// TestQuorumRejectWinsAtOnce: any one approver's reject answers at once.
func TestQuorumRejectWinsAtOnce(t *testing.T) {
	b, _, d, ch := quorumBroker(t)
	if _, err := answerAs(approver("alice"), b, d, "allow-once"); err != nil {
		t.Fatal(err)
	}
	if v, err := answerAs(approver("carol"), b, d, "reject-once"); err != nil || v.AnsweredBy != "carol" {
		t.Fatalf("reject: %v %q", err, v.AnsweredBy)
	}
	jsonEq(t, await(t, ch).result, selected("reject-once"))
}

// TestRequesterMayNotApprove: with requester_may_approve = false the
// person whose prompt led to the request is refused.
func TestRequesterMayNotApprove(t *testing.T) {
	b := newBroker(t, confirm.Options{Policy: mustPolicy(t, "[[rule]]\nname='own'\ndecision='ask'\ncommand='ls *'\nrequester_may_approve=false")})
	ide := newHost("ide")
	r := req("s", "1")
	r.Requester = "rita"
	ch := ask(b, r, ide)
	d := ide.wait(t)
	if _, err := answerAs(approver("rita"), b, d, "allow-once"); !errors.Is(err, confirm.ErrForbidden) {
		t.Fatalf("requester's answer: %v, want ErrForbidden", err)
	}
	if _, err := answerAs(approver("bob"), b, d, "allow-once"); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
}

// TestObserverMayNotAnswer: an observer's answer to any decision is
// refused and journalled with the person; an approver's answer records
// the person on the answered event and in the view.
func TestObserverMayNotAnswer(t *testing.T) {
	b := newBroker(t, confirm.Options{Store: memStore(t)})
	ide := newHost("ide")
	ch := ask(b, req("s", "1"), ide)
	d := ide.wait(t)
	if _, err := answerAs(as("olga", store.RoleObserver), b, d, "allow-once"); !errors.Is(err, confirm.ErrForbidden) {
		t.Fatalf("observer: %v, want ErrForbidden", err)
	}
	v, err := answerAs(as("alice", store.RoleApprover), b, d, "reject-once")
	if err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	people := map[store.EventType]string{}
	for _, ev := range v.Events {
		people[ev.Type] += ev.Person
	}
	if v.AnsweredBy != "alice" || people[store.EventInvalidAnswer] != "olga" || people[store.EventAnswered] != "alice" {
		t.Fatalf("view answeredBy %q, events %+v", v.AnsweredBy, v.Events)
	}
	stored, err := b.Decision(context.Background(), "s", d.ID())
	if err != nil || stored.AnsweredBy != "alice" {
		t.Fatalf("stored view: %q %v", stored.AnsweredBy, err)
	}
}

// race runs answers of people at the same instant on d and returns their
// errors in order.
func race(b *confirm.Broker, d *confirm.Decision, answers map[string]string) map[string]error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := map[string]error{}
	start := make(chan struct{})
	for p, opt := range answers {
		wg.Go(func() {
			<-start
			_, err := answerAs(approver(p), b, d, opt)
			mu.Lock()
			errs[p] = err
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// TestQuorumTwoApproversAtOnce: two approvers vote allow at the same
// instant on a decision that needs two: exactly one vote completes the
// quorum and claims, the agent is answered once, with allow, and both
// votes are counted.
func TestQuorumTwoApproversAtOnce(t *testing.T) {
	for i := range 20 {
		b, _, d, ch := quorumBroker(t)
		errs := race(b, d, map[string]string{"bob": "allow-once", "carol": "allow-once"})
		if errs["bob"] != nil || errs["carol"] != nil {
			t.Fatalf("trial %d: %v", i, errs)
		}
		jsonEq(t, await(t, ch).result, selected("allow-once"))
		v, _ := b.Decision(context.Background(), "s", d.ID())
		if n := count(eventTypes(v), "vote@http"); n != 2 || count(eventTypes(v), "answered@http") != 1 {
			t.Fatalf("trial %d: journal %v", i, eventTypes(v))
		}
	}
}

// TestQuorumRejectRacingAllow: after alice's vote, bob's completing allow
// and carol's reject arrive at once: exactly one decides, the agent gets
// that one, and the other is refused with ErrConflict.
func TestQuorumRejectRacingAllow(t *testing.T) {
	wins := map[string]int{}
	for i := range 20 {
		b, _, d, ch := quorumBroker(t)
		if _, err := answerAs(approver("alice"), b, d, "allow-once"); err != nil {
			t.Fatal(err)
		}
		errs := race(b, d, map[string]string{"bob": "allow-once", "carol": "reject-once"})
		r := await(t, ch)
		v, _ := b.Decision(context.Background(), "s", d.ID())
		switch {
		case errs["bob"] == nil && errors.Is(errs["carol"], confirm.ErrConflict):
			jsonEq(t, r.result, selected("allow-once"))
			wins["allow"]++
		case errs["carol"] == nil && errors.Is(errs["bob"], confirm.ErrConflict):
			jsonEq(t, r.result, selected("reject-once"))
			wins["reject"]++
		default:
			t.Fatalf("trial %d: %v, want exactly one winner", i, errs)
		}
		if v.Status != store.StatusAnswered || count(eventTypes(v), "answered@http") != 1 {
			t.Fatalf("trial %d: %s %v", i, v.Status, eventTypes(v))
		}
	}
	t.Logf("wins %v", wins)
}

// TestQuorumStaleSnapshotVoidsVotes: the snapshot goes stale between two
// votes. When the session's mode changes the gate closes the decision at
// once (reason stale) and the second vote is a conflict; when the
// revalidation hook refuses it at the second vote, that vote gets ErrStale.
// Either way the agent gets the reject option and no vote counts.
func TestQuorumStaleSnapshotVoidsVotes(t *testing.T) {
	t.Run("mode", func(t *testing.T) {
		b, _, d, ch := quorumBroker(t)
		if _, err := answerAs(approver("alice"), b, d, "allow-once"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.SetMode("s", gate.ModePlan, "test"); err != nil {
			t.Fatal(err)
		}
		if _, err := answerAs(approver("bob"), b, d, "allow-once"); !errors.Is(err, confirm.ErrConflict) {
			t.Fatalf("vote after the mode changed: %v, want ErrConflict", err)
		}
		jsonEq(t, await(t, ch).result, selected("reject-once"))
		if v, _ := b.Decision(context.Background(), "s", d.ID()); v.Reason != store.ReasonStale {
			t.Fatalf("reason %s, want stale", v.Reason)
		}
	})
	t.Run("revalidate", func(t *testing.T) {
		var mu sync.Mutex
		stale := false
		b := newBroker(t, confirm.Options{Store: fileStore(t), Policy: mustPolicy(t, quorumPolicy),
			Revalidate: func(context.Context, confirm.Snapshot) error {
				mu.Lock()
				defer mu.Unlock()
				if stale {
					return errors.New("the working directory changed")
				}
				return nil
			}})
		ide := newHost("ide")
		ch := ask(b, req("s", "1"), ide)
		d := ide.wait(t)
		if _, err := answerAs(approver("alice"), b, d, "allow-once"); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		stale = true
		mu.Unlock()
		if _, err := answerAs(approver("bob"), b, d, "allow-once"); !errors.Is(err, confirm.ErrStale) {
			t.Fatalf("vote on a stale snapshot: %v, want ErrStale", err)
		}
		jsonEq(t, await(t, ch).result, selected("reject-once"))
		v, _ := b.Decision(context.Background(), "s", d.ID())
		if v.Reason != store.ReasonStale || count(eventTypes(v), "vote@http") != 1 {
			t.Fatalf("reason %s, journal %v", v.Reason, eventTypes(v))
		}
	})
}

// TestHostWithoutPersonCannotAnswerApproverRule: the only host has no
// person (the IDE on stdio); its answer to a decision whose rule names
// approvers is refused and it abstains, so the decision fails closed at
// once instead of waiting for its deadline.
func TestHostWithoutPersonCannotAnswerApproverRule(t *testing.T) {
	b := newBroker(t, confirm.Options{Policy: mustPolicy(t, quorumPolicy)})
	ide := newHost("ide")
	ch := ask(b, req("s", "1"), ide)
	d := ide.wait(t)
	if err := b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(selected("allow-once"))); !errors.Is(err, confirm.ErrForbidden) {
		t.Fatalf("answer without a person: %v, want ErrForbidden", err)
	}
	jsonEq(t, await(t, ch).result, selected("reject-once"))
	if v, _ := b.Decision(context.Background(), "s", d.ID()); v.Reason != store.ReasonNoEligibleHost {
		t.Fatalf("reason %s, want no_eligible_host", v.Reason)
	}
}

// TestRevokedPersonsVoteDoesNotCount: erin votes, her token is revoked,
// bob votes: the quorum of two is not met (erin's vote is dropped and
// journalled once), the decision stays open, and frank's vote completes
// it. An expired token is dropped the same way.
func TestRevokedPersonsVoteDoesNotCount(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, s *sqlite.Store, clock *atomic.Int64)
	}{
		{"revoked", func(t *testing.T, s *sqlite.Store, _ *atomic.Int64) {
			if err := s.RevokeToken(context.Background(), "erin", time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
		}},
		{"expired", func(t *testing.T, _ *sqlite.Store, clock *atomic.Int64) {
			clock.Add(int64(2 * time.Hour)) // erin's token expires after an hour
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := fileStore(t)
			var clock atomic.Int64
			clock.Store(time.Now().UnixNano())
			now := time.Unix(0, clock.Load()).UTC()
			for _, p := range []string{"erin", "frank", "bob", "gina"} {
				tok := store.Token{Name: p, Role: store.RoleApprover, SHA256: store.TokenSHA256(p), CreatedAt: now}
				if p == "erin" {
					tok.ExpiresAt = now.Add(time.Hour)
				}
				if err := st.AddToken(context.Background(), tok); err != nil {
					t.Fatal(err)
				}
			}
			b := newBroker(t, confirm.Options{Store: st, DefaultTimeout: 24 * time.Hour, Now: func() time.Time { return time.Unix(0, clock.Load()) }, Policy: mustPolicy(t, `
[[rule]]
name = "two-of-four"
decision = "ask"
command = "ls *"
approvers = ["erin", "frank", "bob", "gina"]
quorum = 2
`)})
			ide := newHost("ide")
			ch := ask(b, req("s", "1"), ide)
			d := ide.wait(t)
			if v, err := answerAs(approver("erin"), b, d, "allow-once"); err != nil || v.Status != store.StatusOpen {
				t.Fatalf("erin's vote: %v, status %s", err, v.Status)
			}
			tc.spoil(t, st, &clock)
			v, err := answerAs(approver("bob"), b, d, "allow-once")
			if err != nil || v.Status != store.StatusOpen {
				t.Fatalf("bob's vote after erin's token went: %v, status %s; want nil, open", err, v.Status)
			}
			select {
			case r := <-ch:
				t.Fatalf("the agent was answered with a revoked person's vote counted: %s", r.result)
			default:
			}
			v, err = answerAs(approver("frank"), b, d, "allow-once")
			if err != nil || v.Status != store.StatusAnswered || v.AnsweredBy != "frank" {
				t.Fatalf("frank's vote: %v, status %s, answeredBy %q", err, v.Status, v.AnsweredBy)
			}
			jsonEq(t, await(t, ch).result, selected("allow-once"))
			var votes, dropped []string
			for _, ev := range v.Events {
				switch {
				case ev.Type == store.EventVote:
					votes = append(votes, ev.Person+":"+ev.Detail)
				case ev.Type == store.EventInvalidAnswer && strings.Contains(ev.Detail, "not counted"):
					dropped = append(dropped, ev.Person)
				}
			}
			if fmt.Sprint(votes) != "[erin:allow-once (1 of 2) bob:allow-once (1 of 2) frank:allow-once (2 of 2)]" || fmt.Sprint(dropped) != "[erin]" {
				t.Fatalf("journal votes %v, dropped %v", votes, dropped)
			}
		})
	}
}
