package confirm_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// formParams is an elicitation/create in form mode of session sid asking
// for a required integer "count" (1..10) and an optional string "name".
func formParams(sid string) json.RawMessage {
	return json.RawMessage(`{"sessionId":"` + sid + `","message":"How many?","mode":"form","requestedSchema":{"type":"object",` +
		`"properties":{"count":{"type":"integer","minimum":1,"maximum":10},"name":{"type":"string"}},"required":["count"]}}`)
}

func urlParams(sid, eid string) json.RawMessage {
	return json.RawMessage(`{"sessionId":"` + sid + `","message":"Sign in","mode":"url","url":"https://example.com/login","elicitationId":"` + eid + `"}`)
}

func askQ(b *confirm.Broker, r confirm.Request, hosts ...confirm.Presenter) <-chan askResult {
	ch := make(chan askResult, 1)
	go func() {
		res, err := b.AskQuestion(context.Background(), r, hosts)
		ch <- askResult{res, err}
	}()
	return ch
}

func qreq(sid, key string, params json.RawMessage) confirm.Request {
	return confirm.Request{SessionID: sid, AgentKey: key, Params: params}
}

func accept(content map[string]any) question.Answer {
	return question.Answer{Action: question.Accept, Content: content}
}

// TestQuestionFirstValidAnswerWins: an ACP host and the API answer at once;
// exactly one wins, the agent gets the validated content encoded by acpmux,
// and the other host's copy is withdrawn.
func TestQuestionFirstValidAnswerWins(t *testing.T) {
	for i := 0; i < 20; i++ {
		b := newBroker(t, confirm.Options{})
		ide, api := newHost("ide"), newHost("http")
		ch := askQ(b, qreq("s", "k", formParams("s")), ide, api)
		d := ide.wait(t)
		api.wait(t)
		var wg sync.WaitGroup
		var ideErr, apiErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			ideErr = b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(`{"action":"accept","content":{"count":3}}`))
		}()
		go func() {
			defer wg.Done()
			_, _, apiErr = b.AnswerQuestion(context.Background(), "s", d.ID(), "http", accept(map[string]any{"count": json.Number("7.0"), "name": "x"}))
		}()
		wg.Wait()
		r := await(t, ch)
		if r.err != nil {
			t.Fatal(r.err)
		}
		v := d.View()
		switch v.ResolvedBy {
		case "ide":
			jsonEq(t, r.result, `{"action":"accept","content":{"count":3}}`)
			if !errors.Is(apiErr, confirm.ErrConflict) || ideErr != nil {
				t.Fatalf("ide won; ide %v api %v", ideErr, apiErr)
			}
			if w := api.withdrawals(); len(w) != 1 {
				t.Fatalf("api withdrawals %+v", w)
			}
		case "http":
			if string(r.result) != `{"action":"accept","content":{"count":7,"name":"x"}}` {
				t.Fatalf("result %s", r.result)
			}
			if !errors.Is(ideErr, confirm.ErrConflict) || apiErr != nil {
				t.Fatalf("api won; ide %v api %v", ideErr, apiErr)
			}
			if w := ide.withdrawals(); len(w) != 1 || w[0].Status != store.StatusAnswered || w[0].By != "http" {
				t.Fatalf("ide withdrawals %+v", w)
			}
		default:
			t.Fatalf("resolved by %q", v.ResolvedBy)
		}
		if v.Kind != question.Kind || v.Question == nil || v.Question.Answer == nil || v.Question.Status != "answered" {
			t.Fatalf("view %+v question %+v", v, v.Question)
		}
		if evs := eventTypes(v); count(evs, "answered@"+v.ResolvedBy) != 1 || count(evs, "late_answer@ide")+count(evs, "late_answer@http") != 1 {
			t.Fatalf("journal %v", evs)
		}
	}
}

// TestQuestionInvalidAnswerRefusedThenValidWins: an answer that does not
// match the schema is refused naming the field, the question stays open,
// and the same host's corrected answer wins.
func TestQuestionInvalidAnswerRefusedThenValidWins(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	api := newHost("http")
	ch := askQ(b, qreq("s", "k", formParams("s")), api)
	d := api.wait(t)
	tests := []struct {
		name  string
		a     question.Answer
		field string
	}{
		{"missing required", accept(map[string]any{"name": "x"}), "content.count"},
		{"wrong type", accept(map[string]any{"count": "5"}), "content.count"},
		{"out of range", accept(map[string]any{"count": 11}), "content.count"},
		{"unknown member", accept(map[string]any{"count": 1, "extra": true}), "content.extra"},
		{"unknown action", question.Answer{Action: "Accept"}, "action"},
		{"content with decline", question.Answer{Action: question.Decline, Content: map[string]any{}}, "content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "http", tt.a)
			var fe *question.FieldError
			if !errors.Is(err, confirm.ErrInvalidAnswer) || !errors.Is(err, acp.ErrInvalidParams) || !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("err %v, want invalid answer naming %s", err, tt.field)
			}
			if d.Status() != store.StatusOpen {
				t.Fatalf("status %s after an invalid answer", d.Status())
			}
		})
	}
	if _, _, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "http", accept(map[string]any{"count": 2})); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch).result, `{"action":"accept","content":{"count":2}}`)
	if evs := eventTypes(d.View()); count(evs, "invalid_answer@http") != len(tests) {
		t.Fatalf("journal %v", evs)
	}
	// The same answer again is deduped; another is a conflict.
	if _, dedup, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "http", accept(map[string]any{"count": 2})); err != nil || !dedup {
		t.Fatalf("repeat: deduped %v err %v", dedup, err)
	}
	if _, _, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "http", question.Answer{Action: question.Decline}); !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("late answer: %v", err)
	}
}

// TestQuestionInvalidHostResultAbstains: an ACP host's result that does not
// validate is journalled and the host abstains; with no one left the agent
// gets cancel.
func TestQuestionInvalidHostResultAbstains(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide := newHost("ide")
	ch := askQ(b, qreq("s", "k", formParams("s")), ide)
	d := ide.wait(t)
	if err := b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(`{"action":"accept","content":{"count":0}}`)); !errors.Is(err, confirm.ErrInvalidAnswer) {
		t.Fatalf("err %v", err)
	}
	jsonEq(t, await(t, ch).result, `{"action":"cancel"}`)
	v := d.View()
	if v.Reason != store.ReasonNoEligibleHost || count(eventTypes(v), "invalid_answer@ide") != 1 {
		t.Fatalf("reason %s journal %v", v.Reason, eventTypes(v))
	}
}

// TestQuestionTimeoutAnswersCancel uses a fake clock: the deadline passes,
// the agent gets cancel and the host's copy is withdrawn.
func TestQuestionTimeoutAnswersCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, confirm.Options{})
		never := newHost("never")
		r := qreq("s", "k", formParams("s"))
		r.Timeout = time.Minute
		start := time.Now()
		got, err := b.AskQuestion(context.Background(), r, []confirm.Presenter{never})
		if err != nil {
			t.Fatal(err)
		}
		jsonEq(t, got, `{"action":"cancel"}`)
		if el := time.Since(start); el != time.Minute {
			t.Fatalf("after %v", el)
		}
		d := <-never.presented
		if v := d.View(); v.Status != store.StatusTimedOut || v.Question.Status != "timed_out" || len(never.withdrawals()) != 1 {
			t.Fatalf("view %+v withdrawals %v", v, never.withdrawals())
		}
	})
}

// TestQuestionSessionCancelAnswersCancel: session/cancel closes the open
// question; the agent gets cancel.
func TestQuestionSessionCancelAnswersCancel(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide := newHost("ide")
	ch := askQ(b, qreq("s", "k", formParams("s")), ide)
	d := ide.wait(t)
	b.CancelSession("s", "session/cancel from host ide")
	jsonEq(t, await(t, ch).result, `{"action":"cancel"}`)
	if v := d.View(); v.Reason != store.ReasonSessionCancelled || len(ide.withdrawals()) != 1 {
		t.Fatalf("reason %s withdrawals %v", v.Reason, ide.withdrawals())
	}
}

// TestQuestionNobodyCanAnswerDeclines: no presenter at all (no eligible
// host, no API): decline at once, journalled.
func TestQuestionNobodyCanAnswerDeclines(t *testing.T) {
	s := memStore(t)
	b := newBroker(t, confirm.Options{Store: s})
	got, err := b.AskQuestion(context.Background(), qreq("s", "k", formParams("s")), nil)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, `{"action":"decline"}`)
	rec, err := s.Get(context.Background(), confirm.DecisionID("s", "k"))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != store.StatusCancelled || rec.Reason != store.ReasonNoEligibleHost {
		t.Fatalf("record %s %s", rec.Status, rec.Reason)
	}
}

// TestQuestionUnsupportedDeclines: a schema outside the subset is declined
// at once without presenting it; the journal says why.
func TestQuestionUnsupportedDeclines(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide := newHost("ide")
	p := json.RawMessage(`{"sessionId":"s","message":"Where?","mode":"form","requestedSchema":{"type":"object","properties":{"a":{"type":"object"}}}}`)
	got, err := b.AskQuestion(context.Background(), qreq("s", "k", p), []confirm.Presenter{ide})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, `{"action":"decline"}`)
	if len(ide.presented) != 0 {
		t.Fatal("an unsupported question was presented")
	}
	v, err := b.Decision(context.Background(), "s", confirm.DecisionID("s", "k"))
	if err != nil {
		t.Fatal(err)
	}
	last := v.Events[len(v.Events)-2] // before "delivered"
	if v.Reason != store.ReasonUnsupported || last.Type != store.EventCancelled || last.Detail == "unsupported" {
		t.Fatalf("reason %s last %+v", v.Reason, last)
	}
}

// TestQuestionMalformedParams: malformed params get -32602 and open nothing.
func TestQuestionMalformedParams(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	_, err := b.AskQuestion(context.Background(), qreq("s", "k", json.RawMessage(`{"sessionId":"s","mode":"form"}`)), nil)
	if !errors.Is(err, acp.ErrInvalidParams) {
		t.Fatalf("err %v", err)
	}
	if n := len(b.Sessions()); n != 0 && b.Sessions()[0].Decisions != 0 {
		t.Fatal("a decision opened")
	}
}

// TestQuestionIdempotentOnAgentRequest: the same agent key asks once; the
// same key with other params is refused.
func TestQuestionIdempotentOnAgentRequest(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	api := newHost("http")
	ch1 := askQ(b, qreq("s", "k", formParams("s")), api)
	d := api.wait(t)
	ch2 := askQ(b, qreq("s", "k", formParams("s")), api)
	if _, err := b.AskQuestion(context.Background(), qreq("s", "k", urlParams("s", "e")), nil); !errors.Is(err, acp.ErrInvalidRequest) {
		t.Fatalf("reuse with other params: %v", err)
	}
	if _, _, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "http", question.Answer{Action: question.Decline}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch1).result, `{"action":"decline"}`)
	jsonEq(t, await(t, ch2).result, `{"action":"decline"}`)
}

// TestQuestionURLMode: accept carries no content; an open URL question is
// closed by the agent's elicitation/complete.
func TestQuestionURLMode(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	api := newHost("http")
	ch := askQ(b, qreq("s", "k1", urlParams("s", "e1")), api)
	d := api.wait(t)
	if _, _, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "http", accept(map[string]any{})); !errors.Is(err, confirm.ErrInvalidAnswer) {
		t.Fatalf("accept with content: %v", err)
	}
	if _, _, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "http", question.Answer{Action: question.Accept}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch).result, `{"action":"accept"}`)

	ch = askQ(b, qreq("s", "k2", urlParams("s", "e2")), api)
	d = api.wait(t)
	if b.CompleteElicitation("s", "other") {
		t.Fatal("closed a question of another elicitationId")
	}
	if !b.CompleteElicitation("s", "e2") {
		t.Fatal("elicitation/complete did not close the question")
	}
	jsonEq(t, await(t, ch).result, `{"action":"cancel"}`)
	if v := d.View(); v.Reason != store.ReasonCompleted || len(api.withdrawals()) != 1 {
		t.Fatalf("reason %s withdrawals %v", v.Reason, api.withdrawals())
	}
}

// TestQuestionWrongAnswerKind: a permission answer to a question and a
// question answer to a permission are refused as invalid.
func TestQuestionWrongAnswerKind(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	api := newHost("http")
	qch := askQ(b, qreq("s", "q", formParams("s")), api)
	qd := api.wait(t)
	pch := ask(b, req("s", "p"), api)
	pd := api.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", qd.ID(), "http", confirm.Answer{OptionID: "allow-once"}); !errors.Is(err, confirm.ErrInvalidAnswer) {
		t.Fatalf("optionId for a question: %v", err)
	}
	if _, _, err := b.AnswerQuestion(context.Background(), "s", pd.ID(), "http", question.Answer{Action: question.Accept}); !errors.Is(err, confirm.ErrInvalidAnswer) {
		t.Fatalf("action for a permission: %v", err)
	}
	b.CancelSession("s", "test")
	await(t, qch)
	await(t, pch)
}

// TestQuestionStoredAndRestart: a question is a stored decision with kind
// "question" in its snapshot and its answer readable after the process
// ends; one left open by a process that is gone ends cancelled
// (bridge_restart), as a permission does.
func TestQuestionStoredAndRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newBroker(t, confirm.Options{Store: s})
	api := newHost("http")
	ch := askQ(b, qreq("s", "answered", formParams("s")), api)
	d1 := api.wait(t)
	if _, _, err := b.AnswerQuestion(context.Background(), "s", d1.ID(), "http", accept(map[string]any{"count": 4})); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	open := askQ(b, qreq("s", "open", formParams("s")), api)
	d2 := api.wait(t)
	s.Close() // the "crash"

	s2, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	rec, err := s2.Get(context.Background(), d2.ID())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != store.StatusCancelled || rec.Reason != store.ReasonBridgeRestart || storedSnapshot(t, rec).Kind != question.Kind {
		t.Fatalf("record %s %s snapshot %s", rec.Status, rec.Reason, rec.Snapshot)
	}
	b2 := newBroker(t, confirm.Options{Store: s2})
	v, err := b2.Decision(context.Background(), "s", d1.ID())
	if err != nil {
		t.Fatal(err)
	}
	if v.Question == nil || v.Question.Answer == nil || v.Question.Prompt != "How many?" {
		t.Fatalf("stored question view %+v", v.Question)
	}
	b1, _ := json.Marshal(v.Question.Answer)
	jsonEq(t, b1, `{"action":"accept","content":{"count":4}}`)
	raw, _ := json.Marshal(v)
	var shape map[string]any
	_ = json.Unmarshal(raw, &shape)
	if shape["kind"] != "question" || shape["requestedSchema"] == nil || shape["options"] == nil {
		t.Fatalf("JSON of a stored question: %s", raw)
	}
	if _, _, err := b2.AnswerQuestion(context.Background(), "s", d2.ID(), "http", accept(map[string]any{"count": 1})); !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("answer after restart: %v", err)
	}
	b.AgentExited()
	jsonEq(t, await(t, open).result, `{"action":"cancel"}`)
}
