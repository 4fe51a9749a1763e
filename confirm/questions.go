package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
)

// kindPermission is the kind of a permission decision: its View's "kind"
// and its stored snapshot's; a question's is [question.Kind].
const kindPermission = "permission"

// AskQuestion opens the decision of kind question for req, an agent's
// elicitation/create (req.Params its raw params; ACP "Elicitation",
// https://agentclientprotocol.com/protocol/v1/elicitation), presents it to
// every presenter in hosts and blocks until it closes. It has the life of a
// permission decision (idempotent on SessionID and AgentKey, journal,
// timeout, session cancel, store). It returns the result the bridge sends
// to the agent, built by [question.Response] from a validated answer:
// {"action":"accept","content":{…}}, {"action":"accept"} (URL mode),
// {"action":"decline"} or {"action":"cancel"}.
//
// A question nobody can be asked (hosts empty) and a question outside what
// acpmux serves ([question.ErrUnsupported]) are opened, journalled and
// answered decline at once. Timeout, session cancel, every host
// abstaining, a stale session or a store error answer cancel.
//
// Errors: malformed params (acp.ErrInvalidParams, -32602; no decision
// opens), a params sessionId other than req.SessionID (-32602), the
// AgentKey reused with other params (acp.ErrInvalidRequest), the agent's
// own $/cancel_request (acp.ErrRequestCancelled), context.Cause(ctx).
func (b *Broker) AskQuestion(ctx context.Context, req Request, hosts []Presenter) (json.RawMessage, error) {
	q, unsupported, err := parseQuestion(req)
	if err != nil {
		return nil, err
	}
	if req.AgentKey == "" {
		return nil, fmt.Errorf("%w: confirm: Request.AgentKey is empty", acp.ErrInternal)
	}
	if err := CheckTimeout(req.Timeout); err != nil {
		return nil, err
	}
	timeout := req.Timeout
	if timeout == 0 {
		timeout = b.opts.DefaultTimeout
	}
	sid := q.Params.SessionID
	id := DecisionID(sid, req.AgentKey)
	d, result, err := b.openQuestion(ctx, id, q, req, timeout)
	if d == nil {
		return result, err
	}
	switch {
	case unsupported != nil:
		b.close(d, store.StatusCancelled, store.ReasonUnsupported, unsupported.Error())
	default:
		b.presentAll(d, hosts)
		b.checkEligible(d)
	}
	if b.agentExited() {
		b.close(d, store.StatusCancelled, store.ReasonAgentExited, "")
	}
	select {
	case <-d.done:
	case <-ctx.Done():
		b.close(d, store.StatusCancelled, store.ReasonAskCancelled, context.Cause(ctx).Error())
		<-d.done
	}
	return b.deliver(ctx, d)
}

// parseQuestion parses req's params. A question acpmux cannot serve comes
// back with its params only (Schema nil) and the ErrUnsupported error.
func parseQuestion(req Request) (*question.Question, error, error) {
	q, err := question.New(req.Params)
	var unsupported error
	if errors.Is(err, question.ErrUnsupported) {
		p, perr := question.ParseParams(req.Params)
		if perr != nil {
			return nil, nil, perr
		}
		q, unsupported, err = &question.Question{Params: p}, err, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("elicitation/create params: %w", err)
	}
	sid := string(q.Params.SessionID)
	if sid == "" {
		return nil, nil, fmt.Errorf("%w: confirm: a question needs a sessionId", acp.ErrInvalidParams)
	}
	if req.SessionID != "" && req.SessionID != sid {
		return nil, nil, fmt.Errorf("%w: params sessionId %q is not the session %q", acp.ErrInvalidParams, sid, req.SessionID)
	}
	return q, unsupported, nil
}

// openQuestion returns the existing decision id (same params) or creates it.
func (b *Broker) openQuestion(ctx context.Context, id string, q *question.Question, req Request, timeout time.Duration) (*Decision, json.RawMessage, error) {
	b.mu.Lock()
	d := b.byID[id]
	b.session(string(q.Params.SessionID))
	b.mu.Unlock()
	if d != nil {
		if err := b.sameRequest(ctx, d, req.Params); err != nil {
			return nil, nil, err
		}
		return d, nil, nil
	}
	title := q.Params.Message
	snap := Snapshot{Kind: question.Kind, SessionID: string(q.Params.SessionID), AgentKey: req.AgentKey,
		Request: append(json.RawMessage(nil), req.Params...), RequestSHA256: sha256Hex(req.Params),
		ToolCall: acp.ToolCallUpdate{ToolCallID: q.Params.ToolCallID}, Title: title, Cwd: req.Cwd,
		Warnings: hiddenWarnings(title, q.Params.URL), q: q}
	if snap.Warnings == nil {
		snap.Warnings = []string{}
	}
	d, result, err := b.create(ctx, id, snap, timeout)
	if d == nil && err == nil {
		result = question.Response(question.Answer{Action: question.Decline}) // too many open
	}
	return d, result, err
}

// isQuestion reports whether s is the snapshot of a question.
func (s *Snapshot) isQuestion() bool { return s.Kind == question.Kind }

// questionResult is the agent's result for question d closed by t: the
// validated answer, or decline when nobody could be asked or acpmux cannot
// serve it, else cancel.
func questionResult(d *Decision, t transition) json.RawMessage {
	switch {
	case t.Status == store.StatusAnswered && t.Question != nil:
		return question.Response(*t.Question)
	case t.Reason == store.ReasonUnsupported, t.Reason == store.ReasonNoEligibleHost && len(d.order) == 0:
		return question.Response(question.Answer{Action: question.Decline})
	}
	return question.Response(question.Answer{Action: question.Cancel})
}

// AnswerQuestion records a as host hostID's answer to question decisionID
// of session sessionID: the path of the HTTP API and the CLI. The answer is
// checked with [question.Question.Validate] before it may win; the first
// valid one wins the claim (in memory, then in the store) and its
// [question.Response] reaches the agent; every other host's copy is
// withdrawn. An accept is committed only while the session is alive
// ([Sessions.SessionAlive]; otherwise the question closes as stale).
//
// It returns the decision's view and deduped=true when a repeats the
// answer that won. Errors: [store.ErrNotFound]; ErrInvalidAnswer wrapping the
// [*question.FieldError] that names the refused field (the question stays
// open and the host may try again), or for a decision that is not a
// question; ErrConflict when the question is closed or another answer won
// (journalled as late_answer); ErrConflict and ErrStale together for a
// stale session. Safe for concurrent use.
func (b *Broker) AnswerQuestion(ctx context.Context, sessionID, decisionID, hostID string, a question.Answer) (View, bool, error) {
	d := b.lookup(ctx, decisionID)
	if d == nil || d.snap.SessionID != sessionID {
		v, err := b.Decision(ctx, sessionID, decisionID)
		if err != nil {
			return View{}, false, err
		}
		if v.Question == nil {
			return v, false, fmt.Errorf("%w: decision %s is not a question: answer it with optionId", ErrInvalidAnswer, decisionID)
		}
		if v.Question.Answer != nil && sameAnswer(*v.Question.Answer, a) {
			return v, true, nil
		}
		return v, false, closedConflict(v.Status, v.Reason, v.ResolvedBy)
	}
	if !d.snap.isQuestion() {
		return d.View(), false, fmt.Errorf("%w: decision %s is not a question: answer it with optionId", ErrInvalidAnswer, decisionID)
	}
	deduped, err := b.answerQuestion(ctx, d, hostID, a)
	return d.View(), deduped, err
}

// sameAnswer reports whether a, once validated, is the recorded answer won.
func sameAnswer(won question.Answer, a question.Answer) bool {
	if won.Action != a.Action {
		return false
	}
	return jsonSame(won.Content, a.Content)
}

// jsonSame compares two contents as JSON values.
func jsonSame(x, y map[string]any) bool {
	bx, err1 := json.Marshal(x)
	by, err2 := json.Marshal(y)
	if err1 != nil || err2 != nil {
		return false
	}
	var vx, vy any
	_ = json.Unmarshal(bx, &vx)
	_ = json.Unmarshal(by, &vy)
	bx, _ = json.Marshal(vx)
	by, _ = json.Marshal(vy)
	return string(bx) == string(by)
}

// answerQuestion runs the claim of a on question d for hostID.
func (b *Broker) answerQuestion(ctx context.Context, d *Decision, hostID string, a question.Answer) (bool, error) {
	if err := mayAnswer(ctx, d); err != nil { // people.go
		return false, b.refusePerson(ctx, d, hostID, err)
	}
	valid, ev, err := b.beginQuestion(ctx, d, hostID, a)
	if ev != nil {
		b.persist(d, *ev)
	}
	if valid == nil {
		return err == nil, err
	}
	if valid.Action == question.Accept {
		if s := b.bridge(); s != nil && !s.SessionAlive(d.snap.SessionID) {
			b.commit(d, transition{Status: store.StatusCancelled, Reason: store.ReasonStale}, "stale: "+errSessionGone.Error(), true)
			return false, fmt.Errorf("%w: %w: %v", ErrConflict, ErrStale, errSessionGone)
		}
	}
	t := transition{Status: store.StatusAnswered, Question: valid, By: hostID, Person: personName(ctx), Reason: store.ReasonAnswered}
	if err := b.commit(d, t, string(valid.Action), true); err != nil {
		return false, fmt.Errorf("record answer: %w", err)
	}
	return false, nil
}

// beginQuestion validates a and takes the in-memory claim of d, as begin
// does for a permission; it returns the validated answer when the caller
// owns the claim.
func (b *Broker) beginQuestion(ctx context.Context, d *Decision, hostID string, a question.Answer) (*question.Answer, *store.Event, error) {
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
		if d.qanswer != nil && sameAnswer(*d.qanswer, a) {
			return nil, nil, nil
		}
		ev := d.addEvent(now, store.EventLateAnswer, hostID, string(a.Action))
		return nil, &ev, closedConflict(d.status, d.res.Reason, d.res.By)
	}
	if d.snap.q == nil || (d.snap.q.Params.Mode == question.ModeForm && d.snap.q.Schema == nil) {
		ev := d.addEvent(now, store.EventInvalidAnswer, hostID, "question not supported")
		return nil, &ev, fmt.Errorf("%w: the question is not supported", ErrInvalidAnswer)
	}
	valid, err := d.snap.q.Validate(a)
	if err != nil {
		ev := d.addEvent(now, store.EventInvalidAnswer, hostID, err.Error())
		return nil, &ev, fmt.Errorf("%w: %w", ErrInvalidAnswer, err)
	}
	d.claiming = true
	return &valid, nil, nil
}

// answerQuestionResult takes an ACP host's result for its copy of question
// d (ACP CreateElicitationResponse), decoded strictly
// ([question.DecodeAnswer]): action cancel counts as the host abstaining
// (another host may still answer); an invalid result is journalled and the
// host abstains; otherwise it is claimed as by AnswerQuestion.
func (b *Broker) answerQuestionResult(d *Decision, hostID string, result json.RawMessage) error {
	a, err := question.DecodeAnswer(result)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrInvalidAnswer, err)
		b.invalid(d, hostID, err)
		return err
	}
	if a.Action == question.Cancel && a.Content == nil {
		b.abstain(d, hostID, "host answered cancel")
		return nil
	}
	_, err = b.answerQuestion(context.Background(), d, hostID, a)
	if errors.Is(err, ErrInvalidAnswer) {
		b.abstain(d, hostID, "invalid answer")
	}
	return err
}

// CompleteElicitation handles the agent's elicitation/complete for the URL
// mode question elicitationID (ACP "Elicitation"): a question of that id
// still open in session sessionID ("" for any session) is closed as
// cancelled with reason completed (the agent gets {"action":"cancel"}:
// nobody answered it through acpmux), and every host's copy is withdrawn.
// It reports whether an open question was closed.
func (b *Broker) CompleteElicitation(sessionID, elicitationID string) bool {
	closed := false
	for _, d := range b.openDecisions(sessionID) {
		<-d.ready
		q := d.snap.q
		if q == nil || q.Params.Mode != question.ModeURL || q.Params.ElicitationID != elicitationID {
			continue
		}
		closed = b.close(d, store.StatusCancelled, store.ReasonCompleted, "elicitation/complete from the agent") || closed
	}
	return closed
}

// Question returns the parsed question of d, or nil when d is a permission
// decision (or a question acpmux does not serve). The caller must not
// modify it.
func (d *Decision) Question() *question.Question {
	if d.snap.q == nil || (d.snap.q.Params.Mode == question.ModeForm && d.snap.q.Schema == nil) {
		return nil
	}
	return d.snap.q
}

// questionView fills the question part of v from snapshot s.
func questionView(v *View, s *Snapshot, ans *question.Answer) {
	qv := s.q.View()
	qv.ID, qv.Status, qv.Reason, qv.ResolvedBy = v.ID, string(v.Status), string(v.Reason), v.ResolvedBy
	qv.CreatedAt, qv.Deadline, qv.ClosedAt = v.CreatedAt, v.Deadline, v.ClosedAt
	if ans != nil {
		a := *ans
		qv.Answer = &a
	}
	v.Kind, v.Question, v.Options = question.Kind, &qv, []acp.PermissionOption{}
}

// storedQuestionAnswer is the store's form of a validated answer: the
// action as OptionID, the content's JSON ([question.Response]) as Text.
func storedQuestionAnswer(a question.Answer) *store.Answer {
	sa := &store.Answer{OptionID: string(a.Action)}
	if a.Content != nil {
		var r struct {
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(question.Response(a), &r)
		sa.Text = string(r.Content)
	}
	return sa
}

// questionAnswerOf reads back a stored answer of a question.
func questionAnswerOf(sa *store.Answer) *question.Answer {
	if sa == nil {
		return nil
	}
	a := &question.Answer{Action: question.Action(sa.OptionID)}
	if sa.Text != "" {
		_ = json.Unmarshal([]byte(sa.Text), &a.Content)
	}
	return a
}
