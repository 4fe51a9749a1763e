package confirm_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// sharedBroker opens path as its own store (as another process would) and
// runs a broker of bridge id on it until the test ends. An opts.Store of
// type *readHook wraps that store.
func sharedBroker(t *testing.T, path, id string, opts confirm.Options) *confirm.Broker {
	t.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := opts.Store.(*readHook); ok { // the test's wrapper of this bridge's own store
		w.Store = s
	} else {
		opts.Store = s
	}
	opts.BridgeID = id
	b := newBroker(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- b.RunShared(ctx, confirm.SharedOptions{Bridge: store.Bridge{ID: id, Name: "name-" + id, Host: "box",
			Agent: []string{"agent-" + id}, Cwd: "/w/" + id, Started: time.Now(), Heartbeat: time.Now()}})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		s.Close()
	})
	return b
}

// TestAnswerFromAnotherBridgeReachesOwner: bridge B answers bridge A's
// decision through the shared store; A's agent gets exactly that option,
// A's host copy is withdrawn, the view names bridge A, and a second answer
// conflicts.
func TestAnswerFromAnotherBridgeReachesOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	v, deduped, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if err != nil || deduped {
		t.Fatalf("answer from B: %v (deduped %v)", err, deduped)
	}
	if v.Bridge == nil || v.Bridge.ID != "A" || v.Bridge.Name != "name-A" || v.Bridge.Cwd != "/w/A" {
		t.Fatalf("bridge of the view: %+v", v.Bridge)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	if w := ide.withdrawals(); len(w) != 1 || w[0].By != "http@B" {
		t.Fatalf("withdrawals at A's host: %+v", w)
	}
	if _, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "reject-once"}); !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("second answer: %v, want ErrConflict", err)
	}
	if _, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatalf("a retry of the winning answer: %v", err)
	}
}

// TestARetryWithScopeOnceIsDeduped: ONCE is the scope an answer without
// one has, so a retry of the winning answer that names it, or drops it, is
// the same answer: deduped, through the shared store (from another bridge,
// and at the owner, whose decision is still in memory) and on one bridge.
func TestARetryWithScopeOnceIsDeduped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	ctx := context.Background()
	if _, deduped, err := b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeOnce}); err != nil || deduped {
		t.Fatalf("answer from B: %v (deduped %v)", err, deduped)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	for _, retry := range []struct {
		at    *confirm.Broker
		scope policy.Scope
	}{{b, policy.ScopeOnce}, {b, ""}, {a, policy.ScopeOnce}, {a, ""}} {
		if _, deduped, err := retry.at.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: retry.scope}); err != nil || !deduped {
			t.Fatalf("retry with scope %q: %v (deduped %v), want deduped", retry.scope, err, deduped)
		}
	}
	one := newBroker(t, confirm.Options{})
	ch = ask(one, req("sess-1", "k"), ide)
	d = ide.wait(t)
	if _, _, err := one.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	if _, deduped, err := one.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeOnce}); err != nil || !deduped {
		t.Fatalf("retry with scope ONCE on one bridge: %v (deduped %v), want deduped", err, deduped)
	}
}

// TestARetryWithAnotherScopeConflicts: the store keeps the scope of the
// winning answer, so a retry of the same option with another scope is
// another answer (409), at any bridge of the store and after the owner
// restarted, while the same scope again is deduped.
func TestARetryWithAnotherScopeConflicts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	ctx := context.Background()
	if _, _, err := a.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeSession}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	restarted := func() *confirm.Broker { // A again, on its store, with the decision no longer in memory
		s, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return newBroker(t, confirm.Options{Store: s, BridgeID: "A"})
	}()
	for _, at := range []struct {
		name string
		b    *confirm.Broker
	}{{"the owner", a}, {"another bridge", b}, {"the owner restarted", restarted}} {
		for _, scope := range []policy.Scope{"", policy.ScopeOnce} {
			if _, deduped, err := at.b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: scope}); deduped || !errors.Is(err, confirm.ErrConflict) {
				t.Errorf("%s: a retry with scope %q of a SESSION answer: deduped %v, err %v; want a conflict", at.name, scope, deduped, err)
			}
		}
		if _, deduped, err := at.b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeSession}); !deduped || err != nil {
			t.Errorf("%s: the same SESSION answer again: deduped %v, err %v; want deduped", at.name, deduped, err)
		}
	}
}

// TestARetryWhileTheOwnerIsSlowGetsWhatTheClaimGot: a retry of an answer
// the owner has not taken within the answer's wait (2 s) gets what the
// claim's own answer got: 200 with delivered false (deduped: the same
// answer, still pending), not a verdict the owner has not given; a retry
// whose client leaves during the wait gets the context's error.
func TestARetryWhileTheOwnerIsSlowGetsWhatTheClaimGot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	hold, judging := make(chan struct{}), make(chan struct{}, 1)
	a := sharedBroker(t, path, "A", confirm.Options{Revalidate: func(context.Context, confirm.Snapshot) error {
		judging <- struct{}{}
		<-hold
		return errors.New("the working tree moved")
	}})
	b := sharedBroker(t, path, "B", confirm.Options{})
	c := sharedBroker(t, path, "C", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	ctx := context.Background()
	first := make(chan confirm.View, 1)
	go func() {
		v, _, err := b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeOnce})
		if err != nil {
			t.Errorf("the claimed answer: %v", err)
		}
		first <- v
	}()
	<-judging
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, deduped, err := c.Answer(gone, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); deduped || !errors.Is(err, context.Canceled) {
		t.Fatalf("a retry whose client left: deduped %v, err %v; want context.Canceled", deduped, err)
	}
	v, deduped, err := c.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if err != nil || !deduped || v.Delivered || v.Status != store.StatusAnswered {
		t.Fatalf("a retry while the owner judges past the wait: %s, delivered %v, deduped %v, err %v; want the pending answer", v.Status, v.Delivered, deduped, err)
	}
	if fv := <-first; fv.Delivered || fv.Answer == nil || fv.Answer.Scope != policy.ScopeOnce {
		t.Fatalf("the claim's own answer: delivered %v, answer %+v; want not delivered, scope ONCE", fv.Delivered, fv.Answer)
	}
	close(hold)
	jsonEq(t, await(t, ch).result, selected("reject-once"))
}

// TestARetryOfAClosedDecisionChecksWhoMayAnswer: a retry read from the
// store (another bridge, the decision closed) passes the checks of who
// may answer first: an observer is refused (403), as at the owner.
func TestARetryOfAClosedDecisionChecksWhoMayAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	ctx := context.Background()
	v, _, err := b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeOnce})
	if err != nil {
		t.Fatal(err)
	}
	if v.Answer == nil || v.Answer.Scope != policy.ScopeOnce {
		t.Fatalf("the answer through B: %+v, want scope ONCE (as given)", v.Answer)
	}
	await(t, ch)
	if v, err := a.Decision(ctx, "sess-1", d.ID()); err != nil || v.Answer == nil || v.Answer.Scope != policy.ScopeOnce {
		t.Fatalf("the owner's view: %+v, %v; want scope ONCE", v.Answer, err)
	}
	olga := identity.WithPerson(ctx, identity.Person{Name: "olga", Role: store.RoleObserver})
	if _, deduped, err := b.Answer(olga, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeOnce}); deduped || !errors.Is(err, confirm.ErrForbidden) {
		t.Fatalf("an observer's retry: deduped %v, err %v; want ErrForbidden", deduped, err)
	}
}

// readHook is a bridge's SQLite store that tells read of each Get it
// served and claimed of each Claim it stored, and can run claimHook before
// its next Claim.
type readHook struct {
	*sqlite.Store
	read      chan store.Record
	claimed   chan struct{}
	claimHook func()
	lists     atomic.Int64  // sessions read by ListOf and NewestOf calls
	batches   atomic.Int64  // NewestOf calls
	listed    chan struct{} // when not nil, each ListOf or NewestOf call sends on it first
	hold      chan struct{} // when not nil, each ListOf or NewestOf call then waits for it to close
}

func (h *readHook) NewestOf(ctx context.Context, pairs []store.SessionPair) (map[store.SessionPair]store.Record, error) {
	h.lists.Add(int64(len(pairs)))
	h.batches.Add(1)
	if h.listed != nil {
		h.listed <- struct{}{}
	}
	if h.hold != nil {
		<-h.hold
	}
	return h.Store.NewestOf(ctx, pairs)
}

func (h *readHook) ListOf(ctx context.Context, bridgeID, sessionID string, limit int) ([]store.Record, error) {
	h.lists.Add(1)
	if h.listed != nil {
		h.listed <- struct{}{}
	}
	if h.hold != nil {
		<-h.hold
	}
	return h.Store.ListOf(ctx, bridgeID, sessionID, limit)
}

func (h *readHook) Get(ctx context.Context, id string) (store.Record, error) {
	rec, err := h.Store.Get(ctx, id)
	if err == nil && h.read != nil {
		select {
		case h.read <- rec:
		default:
		}
	}
	return rec, err
}

func (h *readHook) Claim(ctx context.Context, id string, t store.Transition) (bool, error) {
	if f := h.claimHook; f != nil {
		h.claimHook = nil
		f()
	}
	won, err := h.Store.Claim(ctx, id, t)
	if h.claimed != nil {
		h.claimed <- struct{}{}
	}
	return won, err
}

// TestARetryWaitsForTheOwnerToTakeTheAnswer: a retry (through a third
// bridge) of an answer another bridge claimed, found answered in the
// store while the owner still judges it, is not deduped at once: it waits
// for the owner, who refuses it as stale, and conflicts, as the claim's
// own answer does.
func TestARetryWaitsForTheOwnerToTakeTheAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	hold, judging := make(chan struct{}), make(chan struct{}, 1)
	a := sharedBroker(t, path, "A", confirm.Options{Revalidate: func(context.Context, confirm.Snapshot) error {
		judging <- struct{}{}
		<-hold
		return errors.New("the working tree moved")
	}})
	b := sharedBroker(t, path, "B", confirm.Options{})
	hook := &readHook{read: make(chan store.Record, 16)}
	c := sharedBroker(t, path, "C", confirm.Options{Store: hook})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, _, err := b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
		first <- err
	}()
	<-judging
	type outcome struct {
		deduped bool
		err     error
	}
	retry := make(chan outcome, 1)
	go func() {
		_, deduped, err := c.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeOnce})
		retry <- outcome{deduped, err}
	}()
	for rec := range hook.read { // the retry read the row as the claim left it
		if rec.Status == store.StatusAnswered {
			break
		}
	}
	close(hold)
	if err := <-first; !errors.Is(err, confirm.ErrStale) {
		t.Fatalf("the claimed answer: %v, want ErrStale", err)
	}
	if got := <-retry; got.deduped || !errors.Is(got.err, confirm.ErrConflict) {
		t.Fatalf("the retry: deduped %v, err %v; want a conflict (the owner refused the answer)", got.deduped, got.err)
	}
	jsonEq(t, await(t, ch).result, selected("reject-once"))
}

// TestALostClaimOfARefusedAnswerConflicts: a retry that read the decision
// open and then lost its claim to the same answer, which the owner then
// refused as stale, conflicts: the row is cancelled (stale), whatever
// answer its columns still hold.
func TestALostClaimOfARefusedAnswerConflicts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{Revalidate: func(context.Context, confirm.Snapshot) error {
		return errors.New("the working tree moved")
	}})
	b := sharedBroker(t, path, "B", confirm.Options{})
	hook := &readHook{}
	c := sharedBroker(t, path, "C", confirm.Options{Store: hook})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	ctx := context.Background()
	hook.claimHook = func() { // the first answer wins, and is refused, between the retry's read and its claim
		if _, _, err := b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); !errors.Is(err, confirm.ErrStale) {
			t.Errorf("the first answer: %v, want ErrStale", err)
		}
		jsonEq(t, await(t, ch).result, selected("reject-once"))
	}
	v, deduped, err := c.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeOnce})
	if deduped || !errors.Is(err, confirm.ErrConflict) || v.Reason != store.ReasonStale {
		t.Fatalf("the retry: %s (%s), deduped %v, err %v; want a conflict on the stale decision", v.Status, v.Reason, deduped, err)
	}
}

// TestAnOwnersClaimLostToTheSameAnswerIsDeduped: at the owning bridge, an
// answer whose claim in the store loses to the same answer given through
// another bridge is deduped, not a conflict; the agent gets one response.
func TestAnOwnersClaimLostToTheSameAnswerIsDeduped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	hook, bHook := &readHook{}, &readHook{claimed: make(chan struct{}, 1)}
	a := sharedBroker(t, path, "A", confirm.Options{Store: hook})
	b := sharedBroker(t, path, "B", confirm.Options{Store: bHook})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	ctx := context.Background()
	viaB := make(chan error, 1)
	hook.claimHook = func() { // B's claim of the same answer commits first
		go func() {
			_, _, err := b.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
			viaB <- err
		}()
		<-bHook.claimed
	}
	_, deduped, err := a.Answer(ctx, "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if err != nil || !deduped {
		t.Fatalf("the answer at A: deduped %v, err %v; want deduped", deduped, err)
	}
	if err := <-viaB; err != nil {
		t.Fatalf("the answer through B: %v", err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
}

// TestAnswerFromAnotherBridgeChecksTheOffer: an optionId that was not
// offered, or a scope other than ONCE (the asking bridge remembers those),
// is refused by the answering bridge and the decision stays open.
func TestAnswerFromAnotherBridgeChecksTheOffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	for _, ans := range []confirm.Answer{{OptionID: "allow-always"}, {OptionID: "Allow-Once"}, {OptionID: "allow-once", Scope: "ALWAYS"}, {OptionID: "allow-once", Scope: "SESSION"}} {
		_, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", ans)
		if !errors.Is(err, confirm.ErrInvalidAnswer) {
			t.Errorf("answer %+v: %v, want ErrInvalidAnswer", ans, err)
		}
		if scoped := ans.Scope != ""; errors.Is(err, policy.ErrScopeRefused) != scoped {
			t.Errorf("answer %+v: %v; a scope refusal (scope_refused): %v", ans, err, scoped)
		}
	}
	if d.Status() != store.StatusOpen {
		t.Fatalf("status %s after refused answers", d.Status())
	}
	if _, _, err := a.Answer(context.Background(), "sess-1", d.ID(), "ide", confirm.Answer{OptionID: "reject-once"}); err != nil {
		t.Fatal(err)
	}
	await(t, ch) // the Ask ends with the test
}

// TestStaleAnswerFromAnotherBridgeFailsClosed: the owner revalidates an
// answer another bridge claimed; a stale snapshot gives the agent the
// reject option and the answering bridge ErrStale.
func TestStaleAnswerFromAnotherBridgeFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{Revalidate: func(context.Context, confirm.Snapshot) error {
		return errors.New("cwd changed")
	}})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	v, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if !errors.Is(err, confirm.ErrStale) {
		t.Fatalf("answer: %v, want ErrStale", err)
	}
	jsonEq(t, await(t, ch).result, selected("reject-once"))
	if v.Status != store.StatusCancelled || v.Reason != store.ReasonStale {
		t.Fatalf("view after a stale answer: %s/%s", v.Status, v.Reason)
	}
}

// TestAnswersRacingFromTwoBridgesOneWins: A's local answer and B's answer
// through the store start at once, 100 times; exactly one wins each time
// and the agent gets the winner's option.
func TestAnswersRacingFromTwoBridgesOneWins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("http")
	for i := range 100 {
		ch := ask(a, req("sess-1", "k"+string(rune('a'+i%26))+time.Now().String()), ide)
		d := ide.wait(t)
		var wg sync.WaitGroup
		errs := [2]error{}
		start := make(chan struct{})
		for j, br := range []*confirm.Broker{a, b} {
			opt := []string{"allow-once", "reject-once"}[j]
			wg.Go(func() {
				<-start
				_, _, errs[j] = br.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: opt})
			})
		}
		close(start)
		wg.Wait()
		got := await(t, ch).result
		switch {
		case errs[0] == nil && errs[1] != nil:
			jsonEq(t, got, selected("allow-once"))
		case errs[1] == nil && errs[0] != nil:
			jsonEq(t, got, selected("reject-once"))
		default:
			t.Fatalf("trial %d: errors %v, %v: want exactly one winner", i, errs[0], errs[1])
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, confirm.ErrConflict) {
				t.Fatalf("trial %d: loser's error %v, want ErrConflict", i, err)
			}
		}
	}
}

// TestSessionBridgesMarksLiveOnes: of two bridges that used session
// sess-1, the one whose heartbeat is older than the lease is not live, the
// running one is; the API uses that to route a session id that only one
// live bridge still has (docs/decisions.md, "Many bridges").
func TestSessionBridgesMarksLiveOnes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a := sharedBroker(t, path, "A", confirm.Options{})
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := time.Now().Add(-time.Hour)
	if err := s.RegisterBridge(context.Background(), store.Bridge{ID: "Z", Name: "gone", Host: "box", Agent: []string{"x"}, Started: old, Heartbeat: old}); err != nil {
		t.Fatal(err)
	}
	rec := store.Record{ID: "z-1", SessionID: "sess-1", BridgeID: "Z", AgentKey: "k", Request: []byte(`{}`),
		Snapshot: []byte(`{"title":"t"}`), Status: store.StatusOpen, CreatedAt: old, Deadline: old.Add(time.Minute),
		Events: []store.Event{{Seq: 1, At: old, Type: store.EventOpened}}}
	if _, _, err := s.Insert(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	ide.wait(t)
	defer func() { a.CancelSession("sess-1", "test over"); await(t, ch) }()
	refs, err := a.SessionBridges(context.Background(), "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, r := range refs {
		live[r.ID] = r.Live
	}
	if len(refs) != 2 || !live["A"] || live["Z"] {
		t.Fatalf("candidates %+v: want A live and Z not", refs)
	}
}

// gatedClosings is a store whose AppendClosing reports each decision it
// is called for on started and then waits for release: a closing whose
// commit is slow.
type gatedClosings struct {
	*sqlite.Store
	started chan string
	release chan struct{}
}

func (g *gatedClosings) AppendClosing(ctx context.Context, id string, evs []store.Event, it store.PlanItem) error {
	g.started <- id
	<-g.release
	return g.Store.AppendClosing(ctx, id, evs, it)
}

// TestClaimsOfOneOwnerSettleWithoutWaitingForEachOther: bridge B answers
// two of bridge A's decisions through the store, the second while A is
// still storing the first's closing: A settles the second at once (its
// closing is written alongside), and both agents get their answers once
// the writes end. Settling them one after the other made every claim wait
// for the commits of those before it.
func TestClaimsOfOneOwnerSettleWithoutWaitingForEachOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedClosings{Store: s, started: make(chan string, 4), release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(g.release) }) }
	a := newBroker(t, confirm.Options{Store: g, BridgeID: "A"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- a.RunShared(ctx, confirm.SharedOptions{Bridge: store.Bridge{ID: "A", Started: time.Now(), Heartbeat: time.Now()}})
	}()
	t.Cleanup(func() {
		release()
		cancel()
		<-done
		s.Close()
	})
	b := sharedBroker(t, path, "B", confirm.Options{})
	ide := newHost("ide")
	ch1 := ask(a, req("sess-1", "k1"), ide)
	d1 := ide.wait(t)
	ch2 := ask(a, req("sess-1", "k2"), ide)
	d2 := ide.wait(t)
	answer := func(d *confirm.Decision) {
		go b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	}
	started := func(want string) {
		t.Helper()
		select {
		case id := <-g.started:
			if id != want {
				t.Fatalf("closing of %s stored first, want %s", id, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the closing of %s never started while another closing was being stored", want)
		}
	}
	answer(d1)
	started(d1.ID())
	answer(d2)
	started(d2.ID())
	release()
	jsonEq(t, await(t, ch1).result, selected("allow-once"))
	jsonEq(t, await(t, ch2).result, selected("allow-once"))
}
