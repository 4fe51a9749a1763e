package confirm

import (
	"context"

	"github.com/acpmux/acpmux/confirm/store"
)

// maxRestoreTries bounds how many heartbeats retry a closing the store
// refused (restoreClosings); a claim of such a decision is refused at any
// time after (restoreClosing from settleOne).
const maxRestoreTries = 10

// unstoredClosing is the closing of decision d that the store refused
// (storeFailed): t is the outcome the agent got, which the row must come
// to read.
type unstoredClosing struct {
	d     *Decision
	t     transition
	tries int
}

// closingUnstored notes that the store refused t, the closing d's agent
// got, when the store is shared: the heartbeat writes it again, and an
// answer another process claims meanwhile is refused (restoreClosing).
func (b *Broker) closingUnstored(d *Decision, t transition) {
	if b.sharedStore() == nil {
		return
	}
	c := &b.shared
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unstored == nil {
		c.unstored = map[string]*unstoredClosing{}
	}
	c.unstored[d.id] = &unstoredClosing{d: d, t: t}
}

// restoreClosings retries, at a heartbeat, each closing the store refused,
// up to maxRestoreTries times each.
func (b *Broker) restoreClosings(ctx context.Context, sh store.Shared) {
	c := &b.shared
	c.mu.Lock()
	var due []*unstoredClosing
	for _, u := range c.unstored {
		if u.tries < maxRestoreTries {
			u.tries++
			due = append(due, u)
		}
	}
	c.mu.Unlock()
	for _, u := range due {
		b.restoreClosing(ctx, sh, u.d.id)
	}
}

// restoreClosing writes the closing of decision id that the store refused,
// if any, so that the row reads the outcome its agent got: a row still
// open is closed so; an answer another process claimed meanwhile, never
// delivered to the agent, is refused (reclosed to that outcome, so that
// its claimer gets a conflict and the row never reads as an approval).
// Then d's delivered event is stored again, which sets the row's delivery
// time. It forgets the closing once the row is closed.
func (b *Broker) restoreClosing(ctx context.Context, sh store.Shared, id string) {
	c := &b.shared
	c.mu.Lock()
	u := c.unstored[id]
	c.mu.Unlock()
	if u == nil {
		return
	}
	rec, err := b.store.Get(ctx, id)
	if err != nil {
		return
	}
	switch {
	case rec.Status == store.StatusOpen:
		if won, err := b.store.Claim(ctx, id, u.t.stored()); err != nil || !won {
			return // again at the next heartbeat, or at the claim's wake-up
		}
	case rec.Status == store.StatusAnswered && rec.DeliveredAt.IsZero():
		if ok, err := sh.Reclose(ctx, id, u.t.stored()); err != nil || !ok {
			return
		}
		b.log.Warn("confirm: refused an answer from another process: the decision was closed here already",
			"decision", id, "by", rec.ResolvedBy, "status", u.t.Status, "reason", u.t.Reason)
	}
	u.d.mu.Lock()
	var delivered *store.Event
	for i := range u.d.events {
		if u.d.events[i].Type == store.EventDelivered {
			ev := u.d.events[i]
			delivered = &ev
		}
	}
	u.d.mu.Unlock()
	if delivered != nil {
		if err := b.store.Append(ctx, id, *delivered); err != nil {
			return
		}
	}
	c.mu.Lock()
	delete(c.unstored, id)
	c.mu.Unlock()
}
