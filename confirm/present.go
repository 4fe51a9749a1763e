package confirm

import (
	"context"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// presentAll presents d to every presenter of ps that does not hold a copy
// yet. All of them are registered as presenting first, so that an early
// abstention does not leave d without an eligible host while the rest are
// still being presented to.
func (b *Broker) presentAll(d *Decision, ps []Presenter) {
	d.mu.Lock()
	if d.status.Closed() {
		d.mu.Unlock()
		return
	}
	var todo []*hostState
	for _, p := range ps {
		id := p.HostID()
		h := d.hosts[id]
		if h != nil && !h.abstained {
			continue // already presented, or being presented to
		}
		if h == nil {
			d.order = append(d.order, id)
		}
		h = &hostState{p: p, presenting: true}
		d.hosts[id] = h
		todo = append(todo, h)
	}
	d.mu.Unlock()
	for _, h := range todo {
		b.presentOne(d, h)
	}
}

// presentOne calls Present outside the lock and records the outcome. If d
// closed meanwhile, the host's copy is withdrawn here, after Present, so a
// host never sees the withdrawal before the presentation.
func (b *Broker) presentOne(d *Decision, h *hostState) {
	id := h.p.HostID()
	err := h.p.Present(d)
	now := b.now().UTC()
	d.mu.Lock()
	h.presenting = false
	var evs []store.Event
	withdraw, won := false, false
	if err != nil {
		h.abstained = true
		evs = append(evs, d.addEvent(now, store.EventAbstained, id, "present failed: "+err.Error()))
	} else {
		h.presented = true
		ev := d.addEvent(now, store.EventPresented, id, "")
		if !d.status.Closed() && b.store != nil {
			b.deferPresented(d, ev)
			d.mu.Unlock()
			return
		}
		evs = append(evs, ev)
		switch {
		case d.status.Closed() && id != d.res.By && !h.withdrawn:
			h.withdrawn, withdraw = true, true
			evs = append(evs, d.addEvent(now, store.EventWithdrawn, id, ""))
		case d.status.Closed() && id == d.res.By:
			// The host answered before Present returned, and its answer
			// won: finish skipped it (not yet presented), so it is told here.
			won = true
		}
	}
	res := d.res
	d.mu.Unlock()
	b.persist(d, evs...)
	switch {
	case withdraw:
		h.p.Withdraw(d, res)
	case won:
		h.p.Won(d, res)
	}
}

// presentedWriteDelay bounds how long a presented event waits to be
// stored with the decision's next journal write (docs/decisions.md,
// "Journal"): a decision answered within it (by a script, another bridge,
// a policy) stores its presented events with its closing, one write
// fewer; one that stays open stores them on their own once it passes.
const presentedWriteDelay = time.Second

// deferPresented keeps ev, a presented event of d (open), for d's next
// journal write, and arms the write of what is kept for
// presentedWriteDelay later. The caller holds d.mu. The timer's write
// counts as in-flight work of Run; one that fires after Run stopped the
// broker writes nothing, since Run closed d first and its closing took
// the events (takeUnwritten).
func (b *Broker) deferPresented(d *Decision, ev store.Event) {
	d.unwritten = append(d.unwritten, ev)
	if d.unwrittenTimer != nil {
		return
	}
	d.unwrittenTimer = time.AfterFunc(presentedWriteDelay, func() {
		if !b.enter() {
			return
		}
		defer b.inflight.Done()
		b.persist(d)
	})
}

// takeUnwritten returns and clears the events d keeps for its next write
// (deferPresented), for a write that stores them first. The caller holds
// d.mu.
func (d *Decision) takeUnwritten() []store.Event {
	evs := d.unwritten
	d.unwritten = nil
	if d.unwrittenTimer != nil {
		d.unwrittenTimer.Stop()
		d.unwrittenTimer = nil
	}
	return evs
}

// checkEligible fails d closed when it is open, no claim is in flight, no
// host holds a copy it may still answer, and the shared store cannot
// answer it either (storeAnswers).
func (b *Broker) checkEligible(d *Decision) {
	d.mu.Lock()
	none := !d.status.Closed() && !d.claiming && !d.eligible() && !b.storeAnswers(d)
	d.mu.Unlock()
	if none {
		b.close(d, store.StatusCancelled, store.ReasonNoEligibleHost, "")
	}
}

// AddPresenter presents every still-open decision of sessionID to p, a host
// that attached after they opened (a web page, a reconnecting client). A
// host id that had abstained from a decision is presented it again.
func (b *Broker) AddPresenter(sessionID string, p Presenter) {
	for _, d := range b.openDecisions(sessionID) {
		<-d.ready
		b.presentAll(d, []Presenter{p})
		b.checkEligible(d)
	}
}

// Abstain records that host hostID will not answer decision decisionID (it
// disconnected, its queue overflowed, it answered with a JSON-RPC error);
// reason goes to the journal. When no eligible host remains, the decision
// fails closed with reason no_eligible_host. Unknown ids are ignored.
func (b *Broker) Abstain(decisionID, hostID, reason string) {
	d := b.lookup(context.Background(), decisionID)
	if d == nil {
		return
	}
	b.abstain(d, hostID, reason)
}

func (b *Broker) abstain(d *Decision, hostID, reason string) {
	d.mu.Lock()
	h := d.hosts[hostID]
	if h == nil || h.abstained || d.status.Closed() {
		d.mu.Unlock()
		return // nothing left to abstain from
	}
	h.abstained = true
	ev := d.addEvent(b.now().UTC(), store.EventAbstained, hostID, reason)
	d.mu.Unlock()
	b.persist(d, ev)
	b.checkEligible(d)
}

// removePresenter makes host hostID abstain from every open decision, for a
// host that disconnected; reason goes to the journal.
func (b *Broker) removePresenter(hostID, reason string) {
	for _, d := range b.openDecisions("") {
		<-d.ready
		b.abstain(d, hostID, reason)
	}
}

// lookup returns the in-memory decision id once it is ready, or nil.
func (b *Broker) lookup(ctx context.Context, id string) *Decision {
	b.mu.Lock()
	d := b.byID[id]
	b.mu.Unlock()
	if d == nil {
		return nil
	}
	select {
	case <-d.ready:
		return d
	case <-ctx.Done():
		return nil
	}
}
