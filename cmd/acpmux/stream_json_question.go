package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/streamjson"
)

// Questions on stream-json (docs/stream-json.md, "Questions"): the agent's
// elicitation/create, presented to this host by the relay, becomes a
// control_request of subtype elicitation whose request_id is the decision
// id. The script's control_response is decoded strictly and validated by
// the broker (confirm.Broker.AnswerQuestion) before it may win; a refused
// answer gets a control_response of subtype error naming the field, and the
// request stays pending, so the script may answer again. Withdrawn (another
// host won, timeout, session cancel, interrupt): control_cancel_request.

// sjHostID is the relay's id of the stream-json host (journals, resolvedBy).
const sjHostID = "stream-json"

// sjServerName is the mcp_server_name of every elicitation request: the
// question comes from the ACP agent, through acpmux.
const sjServerName = "acpmux"

// sjQuestion is one question pending with the script.
type sjQuestion struct {
	id        []byte // the relay's JSON-RPC id of its elicitation/create
	sid       string
	decision  string
	answering bool // an answer is being validated and claimed
	withdrawn bool // withdrawn while answering: tell the script afterwards
}

// elicitation handles an elicitation/create presented to this host.
func (t *translator) elicitation(id, params []byte) {
	var meta acpmuxMeta
	if raw := acp.MemberBytes(acp.MemberBytes(params, "_meta"), "acpmux"); len(raw) > 0 {
		json.Unmarshal(raw, &meta)
	}
	if meta.DecisionID == "" || t.broker == nil {
		// Nothing to validate an answer against: this host does not answer.
		t.replyError(id, acp.ErrInvalidParams.Code, "acpmux stream-json answers only questions of the relay's broker")
		return
	}
	cr, err := streamjson.Elicitation(meta.DecisionID, sjServerName, params)
	if err != nil {
		t.replyError(id, acp.ErrInvalidParams.Code, err.Error())
		return
	}
	sid := acp.MemberString(params, "sessionId")
	t.pmu.Lock()
	if t.questions == nil {
		t.questions = map[string]*sjQuestion{}
	}
	t.questions[meta.DecisionID] = &sjQuestion{id: id, sid: sid, decision: meta.DecisionID}
	t.byHost[acp.IDKey(id)] = meta.DecisionID
	t.pmu.Unlock()
	t.log.Info("stream-json: question shown to the script", "request_id", meta.DecisionID, "mode", acp.MemberString(params, "mode"))
	t.emit(cr)
}

// withdrawQuestion tells the script that question reqID is withdrawn and
// reports whether reqID was a question.
func (t *translator) withdrawQuestion(reqID string) bool {
	t.pmu.Lock()
	q := t.questions[reqID]
	if q == nil {
		t.pmu.Unlock()
		return false
	}
	delete(t.byHost, acp.IDKey(q.id))
	if q.answering {
		q.withdrawn = true
		t.pmu.Unlock()
		return true
	}
	delete(t.questions, reqID)
	t.pmu.Unlock()
	t.log.Info("stream-json: question withdrawn", "request_id", reqID)
	t.emit(&streamjson.ControlCancelRequest{RequestID: reqID})
	return true
}

// interruptQuestions withdraws every pending question at once (the
// session/cancel that follows closes them in the broker).
func (t *translator) interruptQuestions() {
	t.pmu.Lock()
	var ids []string
	for reqID, q := range t.questions {
		if !q.answering {
			ids = append(ids, reqID)
		}
	}
	t.pmu.Unlock()
	for _, reqID := range ids {
		t.withdrawQuestion(reqID)
	}
}

// answerQuestion handles the script's control_response r to a question
// and reports whether r.RequestID was one.
func (t *translator) answerQuestion(r streamjson.ResponseBody) bool {
	t.pmu.Lock()
	q := t.questions[r.RequestID]
	if q == nil || q.answering {
		t.pmu.Unlock()
		return q != nil
	}
	q.answering = true
	t.pmu.Unlock()

	var a question.Answer
	err := errors.New(r.ErrorText())
	if r.Subtype == streamjson.ResponseSuccess {
		a, err = question.DecodeAnswer(r.Response)
		if err == nil {
			_, _, err = t.broker.AnswerQuestion(context.Background(), q.sid, q.decision, sjHostID, a)
		}
	}
	t.pmu.Lock()
	q.answering = false
	var fe *question.FieldError
	retry := r.Subtype == streamjson.ResponseSuccess && !q.withdrawn &&
		(errors.As(err, &fe) || errors.Is(err, confirm.ErrInvalidAnswer)) && !errors.Is(err, confirm.ErrConflict)
	done := err == nil || !retry
	if done {
		delete(t.questions, r.RequestID)
		delete(t.byHost, acp.IDKey(q.id))
	}
	withdrawn := q.withdrawn
	t.pmu.Unlock()

	switch {
	case err == nil:
		t.log.Info("stream-json: the script answered the question", "request_id", r.RequestID, "action", a.Action)
	case retry:
		msg := err.Error()
		if fe != nil {
			msg = fe.Field + ": " + fe.Reason
			if fe.Field == "" {
				msg = fe.Reason
			}
		}
		t.log.Warn("stream-json: question answer refused; the script may answer again", "request_id", r.RequestID, "err", err)
		t.emit(streamjson.ErrorResponse(r.RequestID, msg))
	case r.Subtype != streamjson.ResponseSuccess && !withdrawn:
		// The script will not answer: this host abstains, others may.
		t.log.Info("stream-json: the script answered the question with an error; abstaining", "request_id", r.RequestID, "error", r.ErrorText())
		t.replyError(q.id, acp.ErrNoHost.Code, "the stream-json script did not answer: "+r.ErrorText())
	default:
		// Closed meanwhile (another host won, timeout, cancel).
		t.log.Info("stream-json: question answer too late", "request_id", r.RequestID, "err", err)
		t.emit(&streamjson.ControlCancelRequest{RequestID: r.RequestID})
	}
	return true
}
