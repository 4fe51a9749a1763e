package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"

	"github.com/acpmux/acpmux/acp"
)

// maxAnswerTextBytes bounds Answer.Text.
const maxAnswerTextBytes = 16 << 10

// Answer records a as host hostID's answer to decision decisionID of session
// sessionID: the path of the HTTP API and the CLI. The first valid answer
// wins the claim (in memory, then in the store in one transaction) and is
// sent to the agent; every other host's copy is withdrawn.
//
// It returns the decision's view after the call and deduped=true when the
// decision was already answered with exactly a (a retry converges). Errors:
// [store.ErrNotFound] (no such decision in that session); ErrConflict when it was
// answered differently, is closed (timed_out, cancelled) or another answer
// won first (the answer is journalled as late_answer); ErrConflict and
// ErrStale together when the revalidation hook refused the snapshot (the
// decision failed closed); ErrInvalidAnswer for an optionId that is not
// exactly one of the offered ones, an empty answer, or text the decision
// does not allow (the decision stays open); any other error is a store
// failure (the decision failed closed). ctx bounds the wait for a claim in
// flight. Safe for concurrent use.
func (b *Broker) Answer(ctx context.Context, sessionID, decisionID, hostID string, a Answer) (View, bool, error) {
	d := b.lookup(ctx, decisionID)
	if d == nil || d.snap.SessionID != sessionID {
		return b.answerStored(ctx, sessionID, decisionID, hostID, a)
	}
	if d.snap.isQuestion() {
		return d.View(), false, fmt.Errorf("%w: decision %s is a question: answer it with action and content", ErrInvalidAnswer, decisionID)
	}
	deduped, err := b.answer(ctx, d, hostID, a)
	return d.View(), deduped, err
}

// answerStored answers a decision that is only in the store: closed by an
// earlier process, or evicted from memory.
func (b *Broker) answerStored(ctx context.Context, sessionID, decisionID, hostID string, a Answer) (View, bool, error) {
	if b.store == nil {
		return View{}, false, store.ErrNotFound
	}
	rec, err := b.store.Get(ctx, decisionID)
	if err != nil || rec.SessionID != sessionID {
		if err == nil || errors.Is(err, store.ErrNotFound) {
			err = store.ErrNotFound
		}
		return View{}, false, err
	}
	snap, err := snapshotOf(rec)
	if err != nil {
		return View{}, false, err
	}
	v := viewWithSnapshot(rec, snap)
	if v.Question != nil {
		return v, false, fmt.Errorf("%w: decision %s is a question: answer it with action and content", ErrInvalidAnswer, decisionID)
	}
	if rec.Status == store.StatusOpen && rec.BridgeID != "" && rec.BridgeID != b.opts.BridgeID {
		return b.answerRemote(ctx, rec, snap, v, hostID, a)
	}
	return b.judgeRetry(ctx, rec, snap, a)
}

// judgeRetry judges a, an answer to stored decision rec that is no longer
// open (or whose claim another answer won), after the checks of who may
// answer (people.go): deduped when the answer that won is a
// ([Answer.repeats], its stored scope included) and stands. An answer
// another process claimed for a decision of another bridge stands only
// once that bridge took it (it checks the answer against its own offer and
// snapshot and may refuse it as stale): judgeRetry waits for that, as the
// claim's own answer does, for up to remoteSettleWait, and when the bridge
// has not taken it by then the retry gets what the claim's answer got, the
// view with Delivered false (deduped: the same answer, still pending). A
// conflict otherwise; ctx's error when it ends during the wait.
func (b *Broker) judgeRetry(ctx context.Context, rec store.Record, snap Snapshot, a Answer) (View, bool, error) {
	v := viewWithSnapshot(rec, snap)
	if err := mayAnswer(ctx, &Decision{snap: snap}); err != nil {
		return v, false, err
	}
	if rec.Status == store.StatusAnswered && rec.DeliveredAt.IsZero() && rec.BridgeID != "" &&
		rec.BridgeID != b.opts.BridgeID && b.sharedStore() != nil {
		var err error
		if sr, ok := b.store.(store.SettledReader); ok {
			v, err = b.awaitRead(ctx, sr, rec.ID, snap)
		} else {
			v, err = b.awaitSettled(ctx, rec.ID, b.shared.changes(rec.ID))
		}
		if err == nil {
			err = context.Cause(ctx) // the client left during the wait: no verdict for it
		}
		if err != nil {
			return View{}, false, err
		}
	}
	b.tagView(ctx, &v, rec.BridgeID)
	if v.Status == store.StatusAnswered && v.Answer != nil && a.repeats(*v.Answer) {
		return v, true, nil
	}
	return v, false, closedConflict(v.Status, v.Reason, v.ResolvedBy)
}

// answer runs the claim of a on d for hostID, after the checks of who may
// answer (people.go); a vote of a quorum decision is counted first
// (quorum.go).
func (b *Broker) answer(ctx context.Context, d *Decision, hostID string, a Answer) (bool, error) {
	if err := mayAnswer(ctx, d); err != nil {
		return false, b.refusePerson(ctx, d, hostID, err)
	}
	if d.voting(a) {
		return b.vote(ctx, d, hostID, a)
	}
	return b.claim(ctx, d, hostID, a)
}

// claim runs the claim of a on d for hostID.
func (b *Broker) claim(ctx context.Context, d *Decision, hostID string, a Answer) (bool, error) {
	opt, ev, err := b.begin(ctx, d, hostID, a)
	if ev != nil {
		b.persist(d, *ev)
	}
	if opt == nil {
		return err == nil, err
	}
	t := transition{Status: store.StatusAnswered, Answer: &a, By: hostID, Person: personName(ctx), Reason: store.ReasonAnswered}
	if mayApprove(*opt) {
		if rerr := b.revalidate(ctx, d); rerr != nil {
			b.commit(d, transition{Status: store.StatusCancelled, Reason: store.ReasonStale}, "stale: "+rerr.Error(), true)
			return false, fmt.Errorf("%w: %w: %v", ErrConflict, ErrStale, rerr)
		}
	}
	if err := b.commit(d, t, a.OptionID, true); err != nil {
		if errors.Is(err, ErrConflict) && d.wonWith(a) {
			return true, nil // another process's claim of the same answer won: a retry that converged
		}
		return false, fmt.Errorf("record answer: %w", err)
	}
	return false, nil
}

// wonWith reports whether d closed answered with a ([Answer.repeats]).
func (d *Decision) wonWith(a Answer) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.status == store.StatusAnswered && d.answer != nil && a.repeats(*d.answer)
}

// begin validates a and takes the in-memory claim of d (the
// compare-and-swap). It returns the chosen option when the caller now owns
// the claim; otherwise nil, with a nil error for a deduped answer or the
// error to return. ev, when not nil, is a journal event to persist. It waits
// for a claim in flight to finish before judging.
func (b *Broker) begin(ctx context.Context, d *Decision, hostID string, a Answer) (*acp.PermissionOption, *store.Event, error) {
	d.mu.Lock()
	for d.claiming {
		done := d.done
		d.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		}
		d.mu.Lock()
	}
	defer d.mu.Unlock()
	now := b.now().UTC()
	if d.status.Closed() {
		if d.answer != nil && a.repeats(*d.answer) {
			return nil, nil, nil
		}
		ev := d.addEvent(now, store.EventLateAnswer, hostID, describe(a))
		return nil, &ev, closedConflict(d.status, d.res.Reason, d.res.By)
	}
	opt, err := d.check(a)
	if err == nil {
		err = b.checkScope(d, a)
	}
	if err != nil {
		ev := d.addEvent(now, store.EventInvalidAnswer, hostID, err.Error())
		return nil, &ev, err
	}
	d.claiming = true
	return &opt, nil, nil
}

// check validates a against d's exact offer. d.mu must be held. The
// returned option is the chosen one, or a synthetic reject for text only.
func (d *Decision) check(a Answer) (acp.PermissionOption, error) {
	if a.Text != "" && !d.snap.AllowFreeText {
		return acp.PermissionOption{}, fmt.Errorf("%w: this decision does not allow free text", ErrInvalidAnswer)
	}
	if len(a.Text) > maxAnswerTextBytes {
		return acp.PermissionOption{}, fmt.Errorf("%w: text longer than %d bytes", ErrInvalidAnswer, maxAnswerTextBytes)
	}
	if a.OptionID == "" {
		if a.Text == "" {
			return acp.PermissionOption{}, fmt.Errorf("%w: empty answer: give an optionId", ErrInvalidAnswer)
		}
		return acp.PermissionOption{Kind: acp.RejectOnce}, nil
	}
	for _, o := range d.snap.Options {
		if o.OptionID == a.OptionID {
			return o, nil
		}
	}
	return acp.PermissionOption{}, fmt.Errorf("%w: optionId %q was not offered", ErrInvalidAnswer, a.OptionID)
}

// mayApprove reports whether choosing o could let the agent act: anything
// but the two reject kinds, including unknown kinds.
func mayApprove(o acp.PermissionOption) bool {
	return o.Kind != acp.RejectOnce && o.Kind != acp.RejectAlways
}

func describe(a Answer) string {
	if a.Text == "" {
		return a.OptionID
	}
	return fmt.Sprintf("%s (with text)", a.OptionID)
}

// AnswerResult takes the JSON-RPC result that ACP host hostID sent for its
// copy of decision decisionID. The result must be exactly
// {"outcome":{"outcome":"selected","optionId":X}} with X one of the offered
// optionIds, or {"outcome":{"outcome":"cancelled"}}, each object optionally
// with _meta; a duplicate or case-variant key (OptionID, optionid), an
// unknown key, a wrong outcome or an unoffered optionId is invalid. An
// invalid result is journalled (invalid_answer), counts as the host
// abstaining, and returns an error wrapping ErrInvalidAnswer. "cancelled"
// counts as the host abstaining and returns nil. A valid selection is
// claimed as by Answer: nil when it won or repeats the winning answer,
// ErrConflict when it was late. [store.ErrNotFound] for an unknown decision,
// an error saying so when hostID holds no copy. See ACP "Tool Calls /
// Requesting Permission"
// (https://agentclientprotocol.com/protocol/v1/tool-calls#requesting-permission).
//
// When ctx carries a person ([identity.WithPerson]: a /acp WebSocket host
// authenticated with a person's token), the answer is checked and
// journalled with that person, and is a vote where the decision needs a
// quorum. An answer the person (or a host without one) may not give
// returns ErrForbidden, and the host abstains: it can never answer this
// decision.
func (b *Broker) AnswerResult(ctx context.Context, decisionID, hostID string, result json.RawMessage) error {
	d := b.lookup(ctx, decisionID)
	if d == nil {
		return store.ErrNotFound
	}
	d.mu.Lock()
	h := d.hosts[hostID]
	holds := h != nil && (h.presented || h.presenting) && !h.abstained
	d.mu.Unlock()
	if !holds {
		return fmt.Errorf("%w: host %q, decision %s", errNotPresented, hostID, decisionID)
	}
	if d.snap.isQuestion() {
		return b.answerQuestionResult(d, hostID, result)
	}
	optionID, cancelled, err := parseResult(result)
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrInvalidAnswer, err)
		b.invalid(d, hostID, err)
		return err
	}
	if cancelled {
		b.abstain(d, hostID, "host answered cancelled")
		return nil
	}
	scope, err := scopeOf(result)
	if err != nil {
		b.invalid(d, hostID, err)
		return err
	}
	_, err = b.answer(ctx, d, hostID, Answer{OptionID: optionID, Scope: scope})
	switch {
	case errors.Is(err, ErrInvalidAnswer):
		b.abstain(d, hostID, "invalid answer")
	case errors.Is(err, ErrForbidden):
		b.abstain(d, hostID, "its person may not answer") // it never can: do not wait for it
	}
	return err
}

// invalid journals a malformed result of hostID and makes it abstain.
func (b *Broker) invalid(d *Decision, hostID string, err error) {
	d.mu.Lock()
	ev := d.addEvent(b.now().UTC(), store.EventInvalidAnswer, hostID, err.Error())
	d.mu.Unlock()
	b.persist(d, ev)
	b.abstain(d, hostID, "invalid answer")
}

// parseResult strictly decodes a RequestPermissionResponse.
func parseResult(result json.RawMessage) (optionID string, cancelled bool, err error) {
	top, err := acp.DecodeObject(result, []string{"outcome", "_meta"}, true)
	if err != nil {
		return "", false, err
	}
	raw, ok := top["outcome"]
	if !ok {
		return "", false, errors.New("result has no outcome")
	}
	out, err := acp.DecodeObject(raw, []string{"outcome", "optionId", "_meta"}, true)
	if err != nil {
		return "", false, fmt.Errorf("outcome: %w", err)
	}
	kind, err := acp.DecodeString(out["outcome"], "outcome.outcome")
	if err != nil {
		return "", false, err
	}
	switch kind {
	case acp.OutcomeCancelled:
		if _, has := out["optionId"]; has {
			return "", false, errors.New(`outcome "cancelled" with an optionId`)
		}
		return "", true, nil
	case acp.OutcomeSelected:
		optionID, err = acp.DecodeString(out["optionId"], "outcome.optionId")
		return optionID, false, err
	}
	return "", false, fmt.Errorf("unknown outcome %q", kind)
}

// revalidate runs the gate's checks (revalidateGate), asks the bridge
// whether the session is alive, and then runs Options.Revalidate on d's
// snapshot.
func (b *Broker) revalidate(ctx context.Context, d *Decision) error {
	if err := b.revalidateGate(d); err != nil {
		return err
	}
	if s := b.bridge(); s != nil && !s.SessionAlive(d.snap.SessionID) {
		return errSessionGone
	}
	if b.opts.Revalidate != nil {
		return b.opts.Revalidate(ctx, d.snap.clone())
	}
	return nil
}
