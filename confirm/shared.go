package confirm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/internal/warm"
)

// BridgeRef names a bridge of a shared store on a view: the "bridge"
// object of the HTTP API (docs/decisions.md, "Many bridges"). JSON in
// camelCase.
type BridgeRef struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Host  string   `json:"host"`
	Agent []string `json:"agent"`
	Cwd   string   `json:"cwd"`
	// Live: the bridge is this one, or it has not stopped (RunShared
	// records a clean stop) and its latest heartbeat is within the lease
	// ([SharedOptions].Lease), as the registry said at most a second
	// before; a bridge that is not live has stopped or died, and its open
	// decisions end owner_lost.
	Live bool `json:"live"`
}

// Defaults of [SharedOptions] (docs/inbox.md, "A bridge that dies").
const (
	defaultHeartbeat = 2 * time.Second
	defaultLease     = 10 * time.Second
	// remoteSettleWait bounds how long an answer to another bridge's
	// decision waits, after winning the claim, for the owning bridge to
	// deliver it to its agent (or refuse it as stale) before the answer's
	// view is returned as it is.
	remoteSettleWait = 2 * time.Second
)

// SharedOptions configure [Broker.RunShared].
type SharedOptions struct {
	// Bridge is this bridge's registry row; its ID must be the broker's
	// Options.BridgeID. An empty ID (acpmux inbox) registers nothing.
	Bridge store.Bridge
	// Heartbeat is how often the bridge heartbeats and sweeps for lost
	// owners: each wait is a random duration from 4/5 of it to it (so that
	// bridges started together do not all beat at once); 0 means 2s.
	Heartbeat time.Duration
	// Lease is how long after its last heartbeat a bridge's open decisions
	// are marked owner_lost; 0 means 10s.
	Lease time.Duration
	// Registered, when not nil, is called once Bridge's row is stored (not
	// for an empty Bridge.ID, nor when the registration failed).
	Registered func()
}

// sharedState is the broker's cache of the registry and the wake-ups of
// answers waiting for their owner. It has its own lock.
type sharedState struct {
	lease   atomic.Int64 // SharedOptions.Lease in nanoseconds, once RunShared started; 0: defaultLease
	mu      sync.Mutex   // guards bridges, fetched, live, liveAt, waiting, unstored, cwds
	bridges map[string]store.Bridge
	fetched time.Time
	// live holds the ids of the live bridges (store.Registry
	// LiveBridges), read at liveAt: at most liveMaxAge old when a
	// BridgeRef is made.
	live    map[string]bool
	liveAt  time.Time
	waiting map[string][]chan struct{} // by decision id: closed at its next change
	reads   settleReads                // claims awaiting their owner, on a store.SettledReader (settlepoll.go)
	// unstored holds, by decision id, the closings the store refused
	// (unstored.go).
	unstored map[string]*unstoredClosing
	// cwds holds, for each other bridge's session in the last session
	// list, the working directory its newest stored decision was asked in
	// and that decision's time (storedCwd): a session with no new decision
	// since is not read again.
	cwds map[sessionKey]storedCwdOf
	// listing is held by AllSessions while it reads the store, so that
	// lists asked at once (pages polling, the first list after a start)
	// read each session's cwd once, not once each.
	listing sync.Mutex
}

// sessionKey names one bridge's session in a shared store.
type sessionKey struct{ bridge, session string }

// storedCwdOf is the working directory of a session's newest stored
// decision (cwd, "" when its snapshot names none) as of that decision's
// creation time (last).
type storedCwdOf struct {
	last time.Time
	cwd  string
}

// leaseOrDefault returns the lease of [SharedOptions], or defaultLease
// before RunShared set one.
func (c *sharedState) leaseOrDefault() time.Duration {
	if l := time.Duration(c.lease.Load()); l > 0 {
		return l
	}
	return defaultLease
}

// changes returns a channel, the caller's own, closed at the next change
// of decision id (or of an unknown one); forget drops it when the caller
// stops waiting first.
func (c *sharedState) changes(id string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == nil {
		c.waiting = map[string][]chan struct{}{}
	}
	ch := make(chan struct{})
	c.waiting[id] = append(c.waiting[id], ch)
	return ch
}

// forget drops ch, a channel changes returned for decision id, unless a
// change closed it already.
func (c *sharedState) forget(id string, ch <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	chs := slices.DeleteFunc(c.waiting[id], func(x chan struct{}) bool { return x == ch })
	if len(chs) == 0 {
		delete(c.waiting, id)
	} else {
		c.waiting[id] = chs
	}
}

// broadcast wakes the waiters of decision id, or every waiter for "".
func (c *sharedState) broadcast(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, chs := range c.waiting {
		if id == "" || k == id {
			for _, ch := range chs {
				close(ch)
			}
			delete(c.waiting, k)
		}
	}
}

// sharedStore returns the store as a [store.Shared] when the broker is one
// of many bridges (BridgeID) or the inbox, else nil.
func (b *Broker) sharedStore() store.Shared {
	if b.opts.BridgeID == "" && !b.opts.Inbox {
		return nil
	}
	s, _ := b.store.(store.Shared)
	return s
}

// RunShared makes the broker one of many bridges sharing its store, until
// ctx ends: it registers opts.Bridge and heartbeats every opts.Heartbeat;
// every heartbeat it also closes, as owner_lost, the open decisions of
// bridges silent for longer than opts.Lease; and it watches the store
// ([store.Shared.Watch]) for answers another process claimed for this
// bridge's decisions, which it settles: the answer is validated again
// against this broker's own offer and snapshot (revalidation as for a
// local answer; stale fails closed) and then delivered to the agent, and
// every local host's copy is withdrawn. It returns nil when ctx ends, an
// error when the store is not shared. A registration the store refuses is
// logged and tried again at each heartbeat.
func (b *Broker) RunShared(ctx context.Context, opts SharedOptions) error {
	sh := b.sharedStore()
	if sh == nil {
		return errors.New("run shared: the store cannot be shared")
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = defaultHeartbeat
	}
	if opts.Lease <= 0 {
		opts.Lease = defaultLease
	}
	b.shared.lease.Store(int64(opts.Lease))
	// register stores this bridge's row; until it succeeds each heartbeat
	// tries again (a store that refused it at start, for a moment), so
	// that the bridge is not left without a row, which the lost-owner
	// sweep takes for a gone bridge.
	registered := opts.Bridge.ID == ""
	register := func() {
		if err := sh.RegisterBridge(ctx, opts.Bridge); err != nil {
			if ctx.Err() == nil {
				b.log.Warn("confirm: cannot register this bridge in the shared store; trying again at each heartbeat", "bridge", opts.Bridge.ID, "err", err)
			}
			return
		}
		registered = true
		if opts.Registered != nil {
			opts.Registered()
		}
	}
	register()
	w := newWakeups()
	var wg sync.WaitGroup
	// Settles run on goroutines kept for a second after each (their
	// stacks, grown by the closing's encoding, stay grown under load).
	settlers := warm.New(time.Second)
	defer settlers.Close()
	_, reads := sh.(store.SettledReader)
	watch := b.opts.BridgeID != "" || !reads // the inbox owns no decisions: it reads its claims' outcomes (settlepoll.go)
	wg.Go(func() {
		for watch && ctx.Err() == nil {
			if err := watchClaims(ctx, sh, func(id string, claimed *store.Record) { b.shared.broadcast(id); w.add(b, id, claimed) }); err != nil {
				b.log.Warn("confirm: store watch failed; retrying", "err", err)
				select {
				case <-ctx.Done():
				case <-time.After(opts.Heartbeat):
				}
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.ready:
			}
			ids, claimed, all := w.take()
			if all {
				ids = append(b.unsettled(ctx, sh), ids...)
			}
			// Each claim settles on its own: settling one waits for its
			// closing to be stored, and the others need not wait for that
			// (with PostgreSQL their closings then share a commit). A
			// second settle of the same decision finds it claiming or
			// closed and returns.
			for _, id := range ids {
				wg.Add(1)
				settlers.Go(func() {
					defer wg.Done()
					b.settleOne(ctx, sh, id, claimed[id])
				})
			}
			if all { // a note wakes the watch with "" (store.Shared.Watch)
				b.journalNotes(ctx) // notes.go: after settling, which the agent waits for
			}
		}
	})
	t := time.NewTimer(beatWait(opts.Heartbeat))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			b.stopBridge(sh, opts.Bridge.ID)
			return nil
		case <-t.C:
			began := time.Now()
			o := opts
			if !registered {
				if register(); !registered {
					o.Bridge.ID = "" // no row to heartbeat yet
				}
			}
			b.beat(ctx, sh, o)
			w.add(b, "", nil) // a missed notification is settled within a heartbeat
			// The next beat comes beatWait after this one began, not after
			// it ended: a slow beat (a store that waits for a lock) does
			// not stretch the period, as with a ticker.
			t.Reset(max(0, beatWait(opts.Heartbeat)-time.Since(began)))
		}
	}
}

// stopBridge records this bridge's clean stop in the registry (when it
// registered), so that other processes see it not live at once instead of
// once its lease ran out: a route naming a session it shared with the
// bridge that replaced it goes to that one, not to a 409. RunShared's
// context has ended: the write gets a few seconds of its own.
func (b *Broker) stopBridge(sh store.Shared, id string) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := sh.StopBridge(ctx, id, b.now().UTC()); err != nil && !errors.Is(err, store.ErrNotFound) { // no row: not live anyway
		b.log.Warn("confirm: cannot record this bridge's stop in the shared store; it reads as live until its lease runs out", "bridge", id, "err", err)
	}
}

// beatWait returns how long after a heartbeat began a shared broker
// begins the next: a random duration from 4/5 of period to period. Never
// longer than period (unless a beat itself takes longer), so that the
// lease's bound holds as documented; random, so that
// bridges started together (and the inbox) drift apart instead of all
// writing and sweeping the store in the same millisecond of every period.
func beatWait(period time.Duration) time.Duration {
	return period - rand.N(period/5+1)
}

// beat heartbeats (when registered) and closes the decisions of bridges
// whose lease ran out. A bridge whose row is gone (retention deleted it
// while the bridge was suspended longer than --retain with no decision
// in the store) registers again, so that the sweep still covers its
// decisions if it dies later.
func (b *Broker) beat(ctx context.Context, sh store.Shared, opts SharedOptions) {
	now := b.now().UTC()
	if opts.Bridge.ID != "" {
		err := sh.Heartbeat(ctx, opts.Bridge.ID, now)
		if errors.Is(err, store.ErrNotFound) {
			again := opts.Bridge
			again.Heartbeat = now
			if err = sh.RegisterBridge(ctx, again); err == nil {
				b.log.Info("bridge registered in the shared store again: its row was gone", "bridge", again.ID)
			}
		}
		if err != nil && ctx.Err() == nil {
			b.log.Warn("confirm: heartbeat failed", "bridge", opts.Bridge.ID, "err", err)
		}
	}
	ids, err := sh.LoseOwners(ctx, now.Add(-opts.Lease), now, b.ownerLostItem(now)) // ownerlost.go: the audit rows, in the same transaction
	if err != nil && ctx.Err() == nil {
		b.log.Warn("confirm: owner_lost sweep failed", "err", err)
	}
	for _, id := range ids {
		b.log.Warn("decision closed: its bridge stopped heartbeating", "decision", id, "reason", store.ReasonOwnerLost)
	}
	b.restoreClosings(ctx, sh) // unstored.go
}

// unsettled returns the decisions of this bridge that another process
// closed in the store and this bridge has not delivered (none for the
// inbox, or when the store cannot be read: logged).
func (b *Broker) unsettled(ctx context.Context, sh store.Shared) []string {
	if b.opts.BridgeID == "" {
		return nil
	}
	ids, err := sh.Unsettled(ctx, b.opts.BridgeID)
	if err != nil && ctx.Err() == nil {
		b.log.Warn("confirm: reading answers from other bridges failed", "err", err)
	}
	return ids
}

// settleOne settles decision id when it is this broker's, open here and
// closed in the store: with claimed, the outcome the store's notification
// of the claim carried ([store.ClaimWatcher]), else with the row read.
func (b *Broker) settleOne(ctx context.Context, sh store.Shared, id string, claimed *store.Record) {
	b.mu.Lock()
	d := b.byID[id]
	b.mu.Unlock()
	if d == nil {
		return
	}
	if d.Status().Closed() {
		b.restoreClosing(ctx, sh, id) // a claim of a decision whose closing the store refused (unstored.go)
		return
	}
	var rec store.Record
	if claimed != nil && claimed.ID == id && b.now().Sub(claimed.ClosedAt) < b.shared.leaseOrDefault()/2 {
		// A claim older than half the lease is read again: a bridge that
		// was suspended meanwhile may have lost it as owner_lost
		// ([store.Shared.LoseOwners]).
		rec = *claimed
	} else {
		var err error
		if rec, err = sh.Get(ctx, id); err != nil {
			return
		}
	}
	if !rec.Status.Closed() {
		return
	}
	d.mu.Lock()
	if d.status.Closed() || d.claiming {
		d.mu.Unlock()
		return // closed here, or a local claim in flight that will find the row closed (settleLost)
	}
	d.claiming = true
	d.mu.Unlock()
	b.settle(d, rec)
}

// wakeups collects what the store's watch reported for the settling
// goroutine: decision ids of this broker, or "all" for an unknown change.
type wakeups struct {
	ready   chan struct{} // has a value when there is something to take
	mu      sync.Mutex    // guards ids, claimed, all
	ids     []string
	claimed map[string]*store.Record // by id: the outcome a claim's notification carried
	all     bool
}

func newWakeups() *wakeups { return &wakeups{ready: make(chan struct{}, 1)} }

// add notes id ("" for an unknown change), and the outcome its claim's
// notification carried (or nil), when it may be b's.
func (w *wakeups) add(b *Broker, id string, claimed *store.Record) {
	if id != "" {
		b.mu.Lock()
		d := b.byID[id]
		b.mu.Unlock()
		if d == nil {
			return // another bridge's
		}
	}
	w.mu.Lock()
	if id == "" {
		w.all = true
	} else {
		w.ids = append(w.ids, id)
		if claimed != nil {
			if w.claimed == nil {
				w.claimed = map[string]*store.Record{}
			}
			w.claimed[id] = claimed
		}
	}
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// take returns and clears what was noted.
func (w *wakeups) take() ([]string, map[string]*store.Record, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids, claimed, all := w.ids, w.claimed, w.all
	w.ids, w.claimed, w.all = nil, nil, false
	return ids, claimed, all
}

// watchClaims runs the store's watch, with the outcomes claims'
// notifications carry where the store has them ([store.ClaimWatcher]).
func watchClaims(ctx context.Context, sh store.Shared, changed func(id string, claimed *store.Record)) error {
	if cw, ok := sh.(store.ClaimWatcher); ok {
		return cw.WatchClaims(ctx, changed)
	}
	return sh.Watch(ctx, func(id string) { changed(id, nil) })
}

// settleLost is called by commit when d's store claim for t lost: when
// another process closed the row, t's journal event becomes a late answer
// (a host's) or notes the loss (the broker's own close), d settles with
// the stored outcome, and it reports true. d.claiming is held by the
// caller's transition.
func (b *Broker) settleLost(d *Decision, t transition) bool {
	if b.sharedStore() == nil {
		return false
	}
	rec, err := b.store.Get(context.Background(), d.id)
	if err != nil || !rec.Status.Closed() {
		return false
	}
	d.mu.Lock()
	var lost *store.Event
	for i := range d.events {
		if ev := &d.events[i]; ev.Seq == t.Event.Seq {
			if t.By != "" {
				ev.Type = store.EventLateAnswer
			}
			ev.Detail += ": another process closed the decision first"
			e := *ev
			lost = &e
		}
	}
	d.mu.Unlock()
	if lost != nil {
		b.persist(d, *lost)
	}
	b.settle(d, rec)
	return true
}

// settle closes d, whose d.claiming the caller set, with the outcome rec
// another process stored: an answer is checked against d's own offer and,
// when it may approve, revalidated; a refused one fails closed as stale
// (and the row is reclosed so).
func (b *Broker) settle(d *Decision, rec store.Record) {
	t := transition{Status: rec.Status, Reason: rec.Reason, By: rec.ResolvedBy}
	detail := string(rec.Reason)
	if rec.Status == store.StatusAnswered {
		t, detail = b.settleAnswer(d, rec)
	}
	t.At = b.now().UTC()
	d.mu.Lock()
	t.Event = d.addPersonEvent(t.At, eventFor(t.Status), t.By, rec.Person, detail)
	d.mu.Unlock()
	var pending []store.Event
	if t.Reason == store.ReasonStale {
		if _, err := b.sharedStore().Reclose(context.Background(), d.id, t.stored()); err != nil {
			b.log.Error("confirm: cannot record a refused answer from another bridge", "decision", d.id, "err", err)
		}
	} else {
		pending = append(pending, t.Event) // stored by finish with the withdrawals, in one write
	}
	b.log.Info("decision settled from the store", "decision", d.id, "status", t.Status, "by", t.By, "reason", t.Reason)
	b.finish(d, t, pending...)
}

// settleAnswer judges the answer another process claimed for d.
func (b *Broker) settleAnswer(d *Decision, rec store.Record) (transition, string) {
	stale := func(why string) (transition, string) {
		return transition{Status: store.StatusCancelled, Reason: store.ReasonStale}, "stale: " + why
	}
	if rec.Answer == nil || d.snap.isQuestion() {
		return stale("an answer from another bridge this bridge cannot take")
	}
	// ONCE, whatever scope the row names: another process's answer never
	// remembers a verdict (the row's ONCE is kept, for the views).
	a := Answer{OptionID: rec.Answer.OptionID, Text: rec.Answer.Text}
	if policy.Scope(rec.Answer.Scope) == policy.ScopeOnce {
		a.Scope = policy.ScopeOnce
	}
	d.mu.Lock()
	opt, err := d.check(a)
	d.mu.Unlock()
	if err != nil {
		return stale(err.Error())
	}
	if mayApprove(opt) {
		if err := b.revalidate(context.Background(), d); err != nil {
			return stale(err.Error())
		}
	}
	return transition{Status: store.StatusAnswered, Answer: &a, By: rec.ResolvedBy, Person: rec.Person, Reason: store.ReasonAnswered}, a.OptionID
}

// answerRemote answers rec, an open decision of another bridge (snap its
// decoded snapshot, v its view): a is
// checked against the stored offer (exactly an offered optionId, free text
// only where allowed, scope ONCE), the claim is taken in the store (one
// answer wins across processes and machines), and then the owning bridge's
// verdict is awaited for up to remoteSettleWait.
func (b *Broker) answerRemote(ctx context.Context, rec store.Record, snap Snapshot, v View, hostID string, a Answer) (View, bool, error) {
	b.tagView(ctx, &v, rec.BridgeID)
	by := hostID + "@" + b.opts.BridgeID
	if b.opts.BridgeID == "" {
		by = hostID + "@inbox"
	}
	if a.Scope != "" && a.Scope != policy.ScopeOnce {
		// Both errors: an answer that is refused (the decision stays
		// open), as a scope (HTTP 400 scope_refused).
		return v, false, b.noteRefused(ctx, rec.ID, by, fmt.Errorf("%w: %w: scope %s is remembered by the bridge that asked, so only that bridge's own hosts (its IDE, or its page with --listen) can give it; through the shared store answer ONCE", ErrInvalidAnswer, policy.ErrScopeRefused, a.Scope))
	}
	if snap.Gate != nil && snap.Gate.Approval != nil {
		return v, false, b.noteRefused(ctx, rec.ID, by, fmt.Errorf("%w: a rule names who may answer this decision (rule %s): answer it at the bridge that asked", ErrForbidden, snap.Gate.DecidedBy))
	}
	if err := mayAnswer(ctx, &Decision{snap: snap}); err != nil { // an observer never answers (people.go)
		return v, false, b.noteRefused(ctx, rec.ID, by, err)
	}
	if _, err := (&Decision{snap: snap}).check(a); err != nil {
		return v, false, b.noteRefused(ctx, rec.ID, by, err)
	}
	now := b.now().UTC()
	if !rec.Deadline.After(now) {
		return v, false, fmt.Errorf("%w: decision is past its deadline", ErrConflict)
	}
	sr, reads := b.store.(store.SettledReader)
	var changed <-chan struct{}
	if !reads {
		changed = b.shared.changes(rec.ID) // before the claim: the owner may settle it at once
	}
	won, err := b.store.Claim(ctx, rec.ID, store.Transition{Status: store.StatusAnswered,
		Answer: &store.Answer{OptionID: a.OptionID, Text: a.Text, Scope: string(a.Scope)}, By: by, Person: personName(ctx), Reason: store.ReasonAnswered, At: now})
	if !won && changed != nil {
		b.shared.forget(rec.ID, changed)
	}
	if err != nil {
		return v, false, fmt.Errorf("record answer: %w", err)
	}
	if !won { // another answer won: a retry of it converges once it stands (judgeRetry)
		lost, err := b.store.Get(ctx, rec.ID)
		if err != nil {
			return v, false, err
		}
		return b.judgeRetry(ctx, lost, snap, a)
	}
	var got View
	var gerr error
	if reads {
		got, gerr = b.awaitRead(ctx, sr, rec.ID, snap)
	} else {
		got, gerr = b.awaitSettled(ctx, rec.ID, changed)
	}
	if gerr != nil {
		return v, false, gerr
	}
	b.tagView(ctx, &got, rec.BridgeID)
	switch {
	case got.Reason == store.ReasonStale:
		return got, false, fmt.Errorf("%w: %w: the bridge that asked refused the answer", ErrConflict, ErrStale)
	case got.Status != store.StatusAnswered:
		return got, false, fmt.Errorf("%w: the bridge that asked had closed the decision already: %s (%s)", ErrConflict, got.Status, got.Reason)
	}
	return got, false, nil
}

// awaitSettled returns the view of stored decision id once its owner
// delivered or refused it, or after remoteSettleWait. It reads the row
// again at each store change RunShared sees (changed, from
// b.shared.changes(id); it is forgotten on return), and every 50ms
// without one (so a change before changed was taken is seen too).
func (b *Broker) awaitSettled(ctx context.Context, id string, changed <-chan struct{}) (View, error) {
	deadline := time.NewTimer(remoteSettleWait)
	defer deadline.Stop()
	var rec store.Record
	for read, fired := false, false; ; read = true {
		if read {
			if fired {
				changed, fired = b.shared.changes(id), false
			}
			var err error
			if rec, err = b.store.Get(ctx, id); err != nil {
				b.shared.forget(id, changed)
				return View{}, err
			}
			if !rec.DeliveredAt.IsZero() || rec.Status != store.StatusAnswered {
				b.shared.forget(id, changed)
				return viewOfRecord(rec)
			}
		}
		select {
		case <-ctx.Done():
		case <-deadline.C:
		case <-changed:
			fired = true
			continue
		case <-time.After(50 * time.Millisecond):
			continue
		}
		b.shared.forget(id, changed)
		if rec.ID == "" { // the wait ended before the first read
			var err error
			if rec, err = b.store.Get(context.WithoutCancel(ctx), id); err != nil {
				return View{}, err
			}
		}
		return viewOfRecord(rec)
	}
}

// awaitRead is awaitSettled on a store that does not notify a claim's
// winner ([store.SettledReader]), with snap the decision's snapshot: the
// broker reads all of its claims awaiting their owner in one query, every
// few milliseconds (settlepoll.go), for up to remoteSettleWait.
func (b *Broker) awaitRead(ctx context.Context, sr store.SettledReader, id string, snap Snapshot) (View, error) {
	rec, ok := b.shared.reads.await(ctx, sr, id)
	if !ok {
		var err error
		if rec, err = b.store.Get(context.WithoutCancel(ctx), id); err != nil {
			return View{}, err
		}
	}
	return viewWithSnapshot(rec, snap), nil
}

// listStored returns the stored decisions of sessionID of this bridge
// (of every bridge for a broker without a BridgeID).
func (b *Broker) listStored(ctx context.Context, sessionID string) ([]store.Record, error) {
	if sh := b.sharedStore(); sh != nil {
		return sh.ListOf(ctx, b.opts.BridgeID, sessionID, maxListed)
	}
	return b.store.List(ctx, sessionID, maxListed)
}

// liveMaxAge bounds how old the set of live bridges behind a
// [BridgeRef].Live may be: a bridge that stopped reads as not live within
// it everywhere (and at once where a route must choose: SessionBridges).
const liveMaxAge = time.Second

// bridgeRef returns the registry row of bridge id as a [BridgeRef]: its
// name and the rest from a cache of the whole registry refreshed when it
// misses id (at most once a second) or is older than 30 seconds; whether
// it is live from the set of live bridges, read again when older than
// liveMaxAge (one small read: the ids of the bridges heartbeating and not
// stopped). Nil when the store is not shared; an unknown id gets its id
// only.
func (b *Broker) bridgeRef(ctx context.Context, id string) *BridgeRef {
	sh := b.sharedStore()
	if sh == nil || id == "" {
		return nil
	}
	c := &b.shared
	c.mu.Lock()
	defer c.mu.Unlock()
	br, ok := c.bridges[id]
	if age := time.Since(c.fetched); (!ok && age > time.Second) || age > 30*time.Second {
		if all, err := sh.Bridges(ctx); err == nil {
			c.bridges, c.fetched = make(map[string]store.Bridge, len(all)), time.Now()
			for _, x := range all {
				c.bridges[x.ID] = x
			}
			br, ok = c.bridges[id]
		}
	}
	if time.Since(c.liveAt) > liveMaxAge {
		if ids, err := sh.LiveBridges(ctx, time.Now().Add(-c.leaseOrDefault())); err == nil {
			c.live, c.liveAt = make(map[string]bool, len(ids)), time.Now()
			for _, x := range ids {
				c.live[x] = true
			}
		}
	}
	live := id == b.opts.BridgeID || c.live[id]
	if !ok {
		return &BridgeRef{ID: id, Agent: []string{}, Live: live}
	}
	agent := br.Agent
	if agent == nil {
		agent = []string{}
	}
	return &BridgeRef{ID: br.ID, Name: br.Name, Host: br.Host, Agent: agent, Cwd: br.Cwd, Live: live}
}

// tagView sets v.Bridge to bridge id's object.
func (b *Broker) tagView(ctx context.Context, v *View, id string) {
	if ref := b.bridgeRef(ctx, id); ref != nil {
		v.Bridge = ref
	}
}

// Shared reports whether the broker is one of many bridges sharing its
// store (Options.BridgeID) or the inbox (Options.Inbox), on a store that
// implements [store.Shared]; the listing methods below then cover every
// bridge of the store.
func (b *Broker) Shared() bool { return b.sharedStore() != nil }

// storeAnswers reports whether d can be answered through the shared store
// by another process (acpmux inbox, another bridge's API or page,
// acpmux decisions): the broker is a bridge of a shared store
// (Options.BridgeID), d is a permission request (questions are answered at
// the bridge that asked) and no policy rule names who may answer it (such
// decisions are refused by [Broker.answerRemote]). Such a decision stays
// open with no local host until it is answered or times out closed
// (docs/run.md, "Headless"). d.mu must be held.
func (b *Broker) storeAnswers(d *Decision) bool {
	if b.opts.BridgeID == "" || b.sharedStore() == nil || d.snap.isQuestion() {
		return false
	}
	return d.snap.Gate == nil || d.snap.Gate.Approval == nil
}

// BridgeID returns Options.BridgeID.
func (b *Broker) BridgeID() string { return b.opts.BridgeID }

// AllSessions returns the sessions of every bridge sharing the store, each
// with its Bridge: this broker's own (in memory, as [Broker.Sessions]) and
// every (bridge, session) pair with stored decisions, by bridge id then
// session id. Without a shared store it is Sessions. It reads the store's
// session list and, for each other bridge's session whose newest
// decision's time differs from what the previous call saw (or whose read
// failed), that decision (its cwd): a page asking every second costs one
// index scan and the sessions that moved.
func (b *Broker) AllSessions(ctx context.Context) ([]SessionView, error) {
	own := b.Sessions()
	sh := b.sharedStore()
	if sh == nil {
		return own, nil
	}
	b.shared.listing.Lock()
	defer b.shared.listing.Unlock()
	rows, err := sh.SessionsOf(ctx, "")
	if err != nil {
		return nil, err
	}
	b.shared.mu.Lock()
	known := b.shared.cwds
	b.shared.mu.Unlock()
	cwds := make(map[sessionKey]storedCwdOf, len(rows))
	newest := b.newestOfMoved(ctx, sh, rows, known) // nil: read each below
	mine := map[string]bool{}
	out := make([]SessionView, 0, len(own)+len(rows))
	for _, s := range own {
		if b.opts.BridgeID == "" {
			break // acpmux inbox: no sessions of its own
		}
		s.Bridge = b.bridgeRef(ctx, b.opts.BridgeID)
		mine[s.SessionID] = true
		out = append(out, s)
	}
	for _, r := range rows {
		if r.BridgeID == b.opts.BridgeID && (mine[r.SessionID] || b.opts.BridgeID != "") {
			continue // this bridge's own: listed from memory
		}
		ref := b.bridgeRef(ctx, r.BridgeID)
		k := sessionKey{r.BridgeID, r.SessionID}
		c, ok := known[k]
		if !ok || !c.last.Equal(r.LastActivity) {
			c = storedCwdOf{last: r.LastActivity}
			if newest != nil {
				c.cwd, ok = cwdOf(newest[store.SessionPair{BridgeID: r.BridgeID, SessionID: r.SessionID}]), true
			} else {
				c.cwd, ok = storedCwd(ctx, sh, r)
			}
		}
		if ok { // a read that failed is tried again at the next list
			cwds[k] = c
		}
		cwd := c.cwd
		if cwd == "" && ref != nil {
			cwd = ref.Cwd
		}
		out = append(out, SessionView{SessionID: r.SessionID, Cwd: cwd, OpenDecisions: r.OpenDecisions,
			Decisions: r.Decisions, LastActivity: r.LastActivity, Bridge: ref})
	}
	b.shared.mu.Lock()
	b.shared.cwds = cwds
	b.shared.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool {
		bi, bj := bridgeID(out[i]), bridgeID(out[j])
		if bi != bj {
			return bi < bj
		}
		return out[i].SessionID < out[j].SessionID
	})
	return out, nil
}

// newestOfMoved reads, in one query of a [store.NewestReader], the newest
// decision of each other bridge's session in rows whose newest decision's
// time differs from what known holds; nil when there are fewer than two
// (or this bridge's own only), the store cannot, or the read failed
// (AllSessions then reads each: storedCwd).
func (b *Broker) newestOfMoved(ctx context.Context, sh store.Shared, rows []store.SessionRow, known map[sessionKey]storedCwdOf) map[store.SessionPair]store.Record {
	nr, ok := sh.(store.NewestReader)
	if !ok {
		return nil
	}
	var pairs []store.SessionPair
	for _, r := range rows {
		if r.BridgeID == b.opts.BridgeID {
			continue // this bridge's own: listed from memory
		}
		if c, ok := known[sessionKey{r.BridgeID, r.SessionID}]; !ok || !c.last.Equal(r.LastActivity) {
			pairs = append(pairs, store.SessionPair{BridgeID: r.BridgeID, SessionID: r.SessionID})
		}
	}
	if len(pairs) < 2 {
		return nil
	}
	out, err := nr.NewestOf(ctx, pairs)
	if err != nil {
		return nil
	}
	return out
}

// cwdOf is the working directory rec was asked in ("" for none: a zero
// record, or a snapshot that does not decode).
func cwdOf(rec store.Record) string {
	if rec.ID == "" {
		return ""
	}
	if snap, err := snapshotOf(rec); err == nil {
		return snap.Cwd
	}
	return ""
}

// storedCwd is the working directory of another bridge's session r: the
// one its newest stored decision was asked in, "" when that decision names
// none, has a snapshot that does not decode, or is gone (AllSessions then
// shows its bridge's). ok is false when the store could not be read.
func storedCwd(ctx context.Context, sh store.Shared, r store.SessionRow) (cwd string, ok bool) {
	recs, err := sh.ListOf(ctx, r.BridgeID, r.SessionID, 1)
	if err != nil {
		return "", false
	}
	if len(recs) == 1 {
		return cwdOf(recs[0]), true
	}
	return "", true
}

func bridgeID(s SessionView) string {
	if s.Bridge == nil {
		return ""
	}
	return s.Bridge.ID
}

// SessionBridges returns the bridges that have a session sessionID: this
// bridge when it knows the session, and every bridge with stored decisions
// of it. When there are several, the registry is read again first (not
// up to a second old): one may have just stopped or registered. Without a
// shared store it is nil.
func (b *Broker) SessionBridges(ctx context.Context, sessionID string) ([]BridgeRef, error) {
	sh := b.sharedStore()
	if sh == nil {
		return nil, nil
	}
	rows, err := sh.SessionsOf(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	refs := func() (out []BridgeRef) {
		seen := map[string]bool{}
		if b.opts.BridgeID != "" && b.HasSession(sessionID) {
			out = append(out, *b.bridgeRef(ctx, b.opts.BridgeID))
			seen[b.opts.BridgeID] = true
		}
		for _, r := range rows {
			if !seen[r.BridgeID] {
				seen[r.BridgeID] = true
				if ref := b.bridgeRef(ctx, r.BridgeID); ref != nil {
					out = append(out, *ref)
				}
			}
		}
		return out
	}
	out := refs()
	if len(out) > 1 {
		// A route must choose among them by liveness: read the registry
		// again rather than trust a copy up to a second old (one of them
		// may have just stopped, and another just registered, as a bridge
		// restarted on a session does).
		b.shared.mu.Lock()
		b.shared.fetched, b.shared.liveAt = time.Time{}, time.Time{}
		b.shared.mu.Unlock()
		out = refs()
	}
	return out, nil
}

// DecisionsOf returns the decisions of session sessionID of bridge
// bridgeID, oldest first, each with its Bridge: [Broker.Decisions] for this
// bridge, else the stored ones (without journals).
func (b *Broker) DecisionsOf(ctx context.Context, bridgeID, sessionID string) ([]View, error) {
	var out []View
	if bridgeID == b.opts.BridgeID {
		vs, err := b.Decisions(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		out = vs
	} else if sh := b.sharedStore(); sh != nil {
		recs, err := sh.ListOf(ctx, bridgeID, sessionID, maxListed)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			v, err := viewOfRecord(r)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	for i := range out {
		b.tagView(ctx, &out[i], bridgeID)
	}
	return out, nil
}

// DecisionOf returns decision decisionID of session sessionID, of any
// bridge of the store (with its Bridge), and the id of its bridge. The
// error wraps [store.ErrNotFound] when there is none in that session.
func (b *Broker) DecisionOf(ctx context.Context, sessionID, decisionID string) (View, string, error) {
	b.mu.Lock()
	d := b.byID[decisionID]
	b.mu.Unlock()
	if d != nil && d.snap.SessionID == sessionID {
		v := d.View()
		b.tagView(ctx, &v, b.opts.BridgeID)
		return v, b.opts.BridgeID, nil
	}
	if b.store == nil {
		return View{}, "", store.ErrNotFound
	}
	r, err := b.store.Get(ctx, decisionID)
	if err != nil {
		return View{}, "", err
	}
	if r.SessionID != sessionID {
		return View{}, "", store.ErrNotFound
	}
	v, err := viewOfRecord(r)
	b.tagView(ctx, &v, r.BridgeID)
	return v, r.BridgeID, err
}
