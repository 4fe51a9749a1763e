package confirm

import (
	"context"
	"errors"
	"fmt"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
	"strings"
	"time"
)

// close moves d from open to status for reason, unless d is already closed
// or another transition (an answer's claim) is in flight, which then wins.
// It reports whether this call closed d. detail goes to the journal.
func (b *Broker) close(d *Decision, status store.Status, reason store.Reason, detail string) bool {
	<-d.ready
	d.mu.Lock()
	if d.status.Closed() || d.claiming {
		d.mu.Unlock()
		return false
	}
	d.claiming = true
	d.mu.Unlock()
	b.commit(d, transition{Status: status, Reason: reason}, detail, true)
	return true
}

// eventFor returns the journal event type of a transition to status.
func eventFor(status store.Status) store.EventType {
	switch status {
	case store.StatusAnswered:
		return store.EventAnswered
	case store.StatusTimedOut:
		return store.EventTimedOut
	}
	return store.EventCancelled
}

// commit finishes the transition t of d, whose d.claiming the caller set
// (the in-memory compare-and-swap). With stored set it first claims the row
// in the store; if that fails, d fails closed as cancelled(store_error)
// instead and the error is returned. It then sets the result, stops the
// timer, wakes the waiters, withdraws every other host's copy and retires d.
func (b *Broker) commit(d *Decision, t transition, detail string, stored bool) error {
	t.At = b.now().UTC()
	if detail == "" {
		detail = string(t.Reason)
	}
	if m := gateMessage(&d.snap, t); m != "" && !strings.Contains(detail, m) {
		detail += ": " + m
	}
	d.mu.Lock()
	t.Event = d.addPersonEvent(t.At, eventFor(t.Status), t.By, t.Person, detail)
	d.mu.Unlock()
	var err error
	if stored && b.store != nil {
		var won bool
		won, err = b.store.Claim(context.Background(), d.id, t.stored())
		if err == nil && !won {
			if b.settleLost(d, t) { // another process's answer won (shared.go)
				return fmt.Errorf("%w: another answer won in the store", ErrConflict)
			}
			err = errors.New("the stored decision is no longer open")
		}
	}
	if err != nil {
		t = b.storeFailed(d, t, err)
	}
	b.finish(d, t)
	return err
}

// storeFailed records that the store refused transition t and returns the
// fail-closed transition that replaces it.
func (b *Broker) storeFailed(d *Decision, t transition, err error) transition {
	b.countStoreError("claim")
	b.log.Error("confirm: cannot record decision outcome; failing closed",
		"decision", d.id, "session", d.snap.SessionID, "wanted", t.Status, "err", err)
	f := transition{Status: store.StatusCancelled, Reason: store.ReasonStoreError, At: b.now().UTC()}
	if turnEnded[t.Reason] {
		f.Reason = t.Reason // the turn is gone either way: the agent gets "cancelled"
	}
	d.mu.Lock()
	f.Event = d.addEvent(f.At, store.EventCancelled, "", string(store.ReasonStoreError)+": "+err.Error())
	d.mu.Unlock()
	if b.store != nil { // best effort: the row may still be open
		if won, err := b.store.Claim(context.Background(), d.id, f.stored()); err != nil || !won {
			b.closingUnstored(d, f) // written again at the heartbeat (unstored.go)
		}
	}
	return f
}

// finish applies the final transition t to d in memory and notifies;
// pending are journal events not stored yet, stored with the withdrawals
// in one write.
func (b *Broker) finish(d *Decision, t transition, pending ...store.Event) {
	d.mu.Lock()
	optionID := outcomeFor(d.snap.Options, t.Status, t.Reason, t.Answer)
	text := ""
	if t.Status == store.StatusAnswered && t.Answer != nil {
		text = t.Answer.Text
		a := *t.Answer
		d.answer = &a
	}
	d.status = t.Status
	d.result = gateResult(&d.snap, t, optionID, text)
	if d.snap.isQuestion() {
		optionID, text = "", ""
		d.answer = nil
		if t.Status == store.StatusAnswered && t.Question != nil {
			a := *t.Question
			d.qanswer = &a
		}
		d.result = questionResult(d, t)
	}
	d.res = Resolution{Status: t.Status, OptionID: optionID, Text: text, By: t.By, Person: t.Person, Reason: t.Reason, At: t.At}
	d.claiming = false
	if d.timer != nil {
		d.timer.Stop()
	}
	var others []Presenter
	var winner Presenter
	var evs []store.Event
	for _, id := range d.order {
		h := d.hosts[id]
		if id == t.By && h.presented {
			winner = h.p
		}
		if id == t.By || h.presenting || !h.presented || h.withdrawn {
			continue // a host still in Present withdraws itself when it returns
		}
		h.withdrawn = true
		others = append(others, h.p)
		evs = append(evs, d.addEvent(t.At, store.EventWithdrawn, id, ""))
	}
	// The Ask waiting for d hands its result over next (deliver): its
	// delivered event goes in this write, one write fewer before the agent
	// gets the result.
	evs = append(evs, d.addEvent(t.At, store.EventDelivered, "", deliveredDetail(d.res, d.result)))
	d.deliveredStored = true
	res := d.res
	kept := d.takeUnwritten() // presented events kept for this write (present.go): stored first, in seq order
	d.mu.Unlock()
	if len(kept) > 0 {
		pending = append(kept, pending...)
	}
	var item gate.PlanItem
	recorded := false
	if !d.snap.isQuestion() { // the gate's audit is for permissions
		item = b.planItem(d, t, res)
		recorded = b.persistClosing(d, item, append(pending, evs...)) // closing.go
	} else {
		b.persist(d, append(pending, evs...)...)
	}
	for _, p := range others {
		p.Withdraw(d, res)
	}
	if winner != nil {
		winner.Won(d, res)
	}
	b.retire(d)
	if !d.snap.isQuestion() { // the gate's audit, remembered verdicts and breaker are for permissions
		b.afterClose(d, t, res, item, recorded)
		b.tellBlocked(d)
	}
	b.countClosed(d, res)
	// Only now may Ask answer the agent: its next request must see the
	// remembered SESSION verdict, the breaker's count and a mode left
	// after switch_mode (it raced them before).
	close(d.done)
	args := []any{"decision", d.id, "session", d.snap.SessionID, "route", d.snap.route(),
		"status", res.Status, "by", res.By, "reason", res.Reason, "optionId", res.OptionID,
		"wait_ms", res.At.Sub(d.created).Milliseconds(),
		// The agent's own wait: the closing was stored first (a row locked
		// elsewhere, a slow store make it longer than wait_ms).
		"delivered_ms", b.now().Sub(d.created).Milliseconds()}
	if res.Person != "" {
		args = append(args, "person", res.Person) // last, so the keys before keep their place
	}
	b.log.Info("decision closed", args...)
}

// retire moves d from its session's open set to its recent closed ones,
// forgetting the oldest beyond KeepClosedPerSession (the store keeps them).
func (b *Broker) retire(d *Decision) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sessions[d.snap.SessionID]
	if s == nil || s.open[d.id] != d {
		return
	}
	delete(s.open, d.id)
	b.openTotal--
	s.closed = append(s.closed, d)
	for len(s.closed) > b.opts.KeepClosedPerSession {
		old := s.closed[0]
		s.closed = s.closed[1:]
		if b.byID[old.id] == old {
			delete(b.byID, old.id)
		}
	}
}

// startTimer arms d's timeout. Its callback counts as in-flight work of Run.
func (b *Broker) startTimer(d *Decision, timeout time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.status.Closed() {
		return
	}
	d.timer = time.AfterFunc(timeout, func() {
		if !b.enter() {
			return
		}
		defer b.inflight.Done()
		b.close(d, store.StatusTimedOut, store.ReasonTimeout, "")
	})
}

// enter registers a timer callback with Run unless the broker stopped.
func (b *Broker) enter() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return false
	}
	b.inflight.Add(1)
	return true
}

// openDecisions returns the open decisions of sessionID, or of every session
// when sessionID is "".
func (b *Broker) openDecisions(sessionID string) []*Decision {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Decision
	for id, s := range b.sessions {
		if sessionID != "" && id != sessionID {
			continue
		}
		for _, d := range s.open {
			out = append(out, d)
		}
	}
	return out
}

// CancelSession handles session/cancel from any host (ACP "Prompt Turn /
// Cancellation"): every open decision of sessionID is cancelled, the agent
// gets {"outcome":"cancelled"} for each (the waiting Ask calls return it),
// every host's copy is withdrawn and later answers conflict. reason (for
// example "session/cancel from host ide-1") goes to the journal. A claim
// already in flight completes first.
func (b *Broker) CancelSession(sessionID, reason string) {
	for _, d := range b.openDecisions(sessionID) {
		b.close(d, store.StatusCancelled, store.ReasonSessionCancelled, reason)
	}
}

// CancelRequest handles the agent's own $/cancel_request for its pending
// session/request_permission, decision decisionID (ACP request-cancellation RFD): the
// decision is cancelled with reason agent_cancelled, copies are withdrawn and
// the waiting Ask returns an error wrapping acp.ErrRequestCancelled (-32800).
// It reports whether an open decision was cancelled.
func (b *Broker) CancelRequest(decisionID string) bool {
	b.mu.Lock()
	d := b.byID[decisionID]
	b.mu.Unlock()
	return d != nil && b.close(d, store.StatusCancelled, store.ReasonAgentCancelled, "$/cancel_request from the agent")
}

// AgentExited cancels every open decision with reason agent_exited: the
// agent process ended, so none of its requests can be answered.
func (b *Broker) AgentExited() {
	b.mu.Lock()
	b.gone = true
	b.mu.Unlock()
	for _, d := range b.openDecisions("") {
		b.close(d, store.StatusCancelled, store.ReasonAgentExited, "")
	}
}

// Run waits until ctx ends, then refuses new requests, cancels every open
// decision with reason bridge_shutdown (the agent gets "cancelled") and
// waits for the timer callbacks it started. It always returns nil. Running
// it is optional; without it decisions still time out.
func (b *Broker) Run(ctx context.Context) error {
	<-ctx.Done()
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	for _, d := range b.openDecisions("") {
		b.close(d, store.StatusCancelled, store.ReasonBridgeShutdown, context.Cause(ctx).Error())
	}
	b.inflight.Wait()
	return nil
}

// agentExited reports whether AgentExited was called.
func (b *Broker) agentExited() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gone
}

// transition is the one move of a decision out of the open status, as the
// broker sees it: the answer with its scope. stored gives the store's form.
type transition struct {
	Status store.Status
	Answer *Answer
	// Question is a question's validated winning answer.
	Question *question.Answer
	By       string // winning host id, or the gate's decidedBy; "" when the broker closed it
	Person   string // the winning answer's person (people.go), "" when none
	Reason   store.Reason
	At       time.Time
	Event    store.Event // the terminal journal event, written in the same transaction
}

// stored returns t as the store records it.
func (t transition) stored() store.Transition {
	st := store.Transition{Status: t.Status, By: t.By, Person: t.Person, Reason: t.Reason, At: t.At, Event: t.Event}
	if t.Answer != nil {
		st.Answer = &store.Answer{OptionID: t.Answer.OptionID, Text: t.Answer.Text, Scope: string(t.Answer.Scope)}
	}
	if t.Question != nil {
		st.Answer = storedQuestionAnswer(*t.Question)
	}
	return st
}
