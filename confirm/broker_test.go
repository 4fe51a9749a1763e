package confirm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

func TestAskRejectsInvalidRequest(t *testing.T) {
	tests := []struct {
		name   string
		params string
	}{
		{"no options", `{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[]}`},
		{"options missing", `{"sessionId":"s","toolCall":{"toolCallId":"c"}}`},
		{"options not an array", `{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":{}}`},
		{"duplicate optionId", `{"sessionId":"s","options":[{"optionId":"a","name":"A","kind":"allow_once"},{"optionId":"a","name":"B","kind":"reject_once"}]}`},
		{"empty optionId", `{"sessionId":"s","options":[{"optionId":"","name":"A","kind":"allow_once"}]}`},
		{"optionId not a string", `{"sessionId":"s","options":[{"optionId":1,"name":"A","kind":"allow_once"}]}`},
		{"case-variant optionId key", `{"sessionId":"s","options":[{"OptionID":"a","name":"A","kind":"allow_once"}]}`},
		{"duplicate optionId key", `{"sessionId":"s","options":[{"optionId":"a","optionId":"b","name":"A","kind":"allow_once"}]}`},
		{"case-variant options key", `{"sessionId":"s","options":[{"optionId":"a","name":"A","kind":"allow_once"}],"Options":[]}`},
		{"other session", `{"sessionId":"other","options":[{"optionId":"a","name":"A","kind":"allow_once"}]}`},
		{"not JSON", `{"sessionId":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBroker(t, confirm.Options{})
			ide := newHost("ide")
			_, err := b.Ask(context.Background(), confirm.Request{SessionID: "s", AgentKey: "k", Params: json.RawMessage(tt.params)}, []confirm.Presenter{ide})
			if !errors.Is(err, acp.ErrInvalidParams) {
				t.Fatalf("err = %v, want -32602", err)
			}
			if got := acp.AsError(err).Code; got != -32602 {
				t.Fatalf("wire code = %d", got)
			}
			if len(ide.presented) != 0 {
				t.Fatal("an invalid request was presented")
			}
			if vs, _ := b.Decisions(context.Background(), "s"); len(vs) != 0 {
				t.Fatalf("a decision was opened: %+v", vs)
			}
		})
	}
}

func TestTimeoutOutOfRange(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	for _, d := range []time.Duration{-time.Second, confirm.MaxTimeout + time.Second} {
		r := req("s", "k")
		r.Timeout = d
		if _, err := b.Ask(context.Background(), r, nil); !errors.Is(err, confirm.ErrInvalidTimeout) {
			t.Errorf("timeout %v: err = %v, want ErrInvalidTimeout", d, err)
		}
	}
	if _, err := confirm.NewBroker(confirm.Options{DefaultTimeout: 25 * time.Hour}); !errors.Is(err, confirm.ErrInvalidTimeout) {
		t.Errorf("NewBroker 25h: err = %v", err)
	}
	if err := confirm.CheckTimeout(confirm.MaxTimeout); err != nil {
		t.Errorf("24h must be valid: %v", err)
	}
}

// Three hosts: the stdio IDE (slow: it answers 300ms after the request, on
// the bubble's clock), the HTTP API, and a scripted second JSON-RPC host
// that never answers. The API answer wins; both other copies are withdrawn.
func TestAPIAnswerBeatsSlowIDE(t *testing.T) {
	for _, kind := range []string{"none", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := confirm.Options{}
				if kind == "sqlite" {
					opts.Store = fileStore(t)
				}
				b := newBroker(t, opts)
				ide, api, second := newHost("ide"), newHost("http"), newHost("ws-2")
				ide.onPresent = answerAfter(b, 300*time.Millisecond, selected("reject-once"))
				ch := ask(b, req("s1", "e1/n5"), ide, api, second)
				d := api.wait(t)
				v, deduped, err := b.Answer(context.Background(), "s1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
				if err != nil || deduped {
					t.Fatalf("Answer: deduped=%v err=%v", deduped, err)
				}
				if v.Status != store.StatusAnswered || v.ResolvedBy != "http" || v.Answer.OptionID != "allow-once" {
					t.Fatalf("view = %+v", v)
				}
				r := await(t, ch)
				if r.err != nil {
					t.Fatal(r.err)
				}
				jsonEq(t, r.result, selected("allow-once"))
				ide.wg.Wait() // the IDE's late answer arrived
				for _, h := range []*fakeHost{ide, second} {
					w := h.withdrawals()
					if len(w) != 1 || w[0].By != "http" || w[0].OptionID != "allow-once" {
						t.Errorf("%s withdrawals = %+v", h.id, w)
					}
				}
				if w := api.withdrawals(); len(w) != 0 {
					t.Errorf("the winner was withdrawn: %+v", w)
				}
				v, err = b.Decision(context.Background(), "s1", d.ID())
				if err != nil {
					t.Fatal(err)
				}
				evs := eventTypes(v)
				for _, want := range []string{"opened", "presented@ide", "presented@http", "presented@ws-2", "answered@http",
					"withdrawn@ide", "withdrawn@ws-2", "delivered", "late_answer@ide"} {
					if count(evs, want) != 1 {
						t.Errorf("journal %v: want one %s", evs, want)
					}
				}
				if evs[0] != "opened" {
					t.Errorf("journal starts with %s", evs[0])
				}
			})
		})
	}
}

func TestForgedAnswersNeverApprove(t *testing.T) {
	offer := []string{"allow-once:allow_once", "reject-once:reject_once"}
	tests := []struct{ name, result string }{
		{"unoffered allow_always", selected("allow_always")},
		{"unoffered id", selected("allow-always")},
		{"kind instead of id", selected("allow_once")},
		{"case-variant optionId key", `{"outcome":{"outcome":"selected","OptionID":"allow-once"}}`},
		{"lower-case optionid key", `{"outcome":{"outcome":"selected","optionid":"allow-once"}}`},
		{"duplicate optionId key", `{"outcome":{"outcome":"selected","optionId":"reject-once","optionId":"allow-once"}}`},
		{"duplicate via escape", `{"outcome":{"outcome":"selected","optionId":"reject-once","option\u0049d":"allow-once"}}`},
		{"case-variant outcome key", `{"Outcome":{"outcome":"selected","optionId":"allow-once"}}`},
		{"duplicate outcome", `{"outcome":{"outcome":"cancelled"},"outcome":{"outcome":"selected","optionId":"allow-once"}}`},
		{"unknown outcome", `{"outcome":{"outcome":"approved","optionId":"allow-once"}}`},
		{"upper-case selected", `{"outcome":{"outcome":"SELECTED","optionId":"allow-once"}}`},
		{"selected without optionId", `{"outcome":{"outcome":"selected"}}`},
		{"optionId with space", selected("allow-once ")},
		{"optionId case", selected("Allow-Once")},
		{"lookalike optionId", selected("allow-оnce")}, // Cyrillic o
		{"extra member", `{"outcome":{"outcome":"selected","optionId":"allow-once","approved":true}}`},
		{"flat shape", `{"outcome":"selected","optionId":"allow-once"}`},
		{"approved flag", `{"approved":true}`},
		{"not an object", `"allow-once"`},
		{"null optionId", `{"outcome":{"outcome":"selected","optionId":null}}`},
		{"trailing data", selected("allow-once") + `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBroker(t, confirm.Options{Store: memStore(t)})
			ide := newHost("ide")
			ch := ask(b, req("s", "k", offer...), ide)
			d := ide.wait(t)
			err := b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(tt.result))
			if !errors.Is(err, confirm.ErrInvalidAnswer) {
				t.Fatalf("AnswerResult err = %v, want ErrInvalidAnswer", err)
			}
			r := await(t, ch) // the only host abstained: fail closed
			jsonEq(t, r.result, selected("reject-once"))
			v, _ := b.Decision(context.Background(), "s", d.ID())
			if v.Status != store.StatusCancelled || v.Reason != store.ReasonNoEligibleHost || v.Answer != nil {
				t.Fatalf("view status=%s reason=%s answer=%v", v.Status, v.Reason, v.Answer)
			}
			if evs := eventTypes(v); count(evs, "invalid_answer@ide") != 1 || count(evs, "abstained@ide") != 1 {
				t.Fatalf("journal %v", evs)
			}
		})
	}
}

func TestAPIInvalidAnswerKeepsDecisionOpen(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	api := newHost("http")
	ch := ask(b, req("s", "k"), api)
	d := api.wait(t)
	for _, a := range []confirm.Answer{
		{OptionID: "allow_always"},
		{OptionID: "ALLOW-ONCE"},
		{},
		{OptionID: "allow-once", Text: "free text is not allowed here"},
	} {
		_, _, err := b.Answer(context.Background(), "s", d.ID(), "http", a)
		if !errors.Is(err, confirm.ErrInvalidAnswer) {
			t.Fatalf("answer %+v: err = %v", a, err)
		}
	}
	if st := d.Status(); st != store.StatusOpen {
		t.Fatalf("status = %s after invalid answers", st)
	}
	if _, _, err := b.Answer(context.Background(), "other", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("wrong session: err = %v", err)
	}
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "reject-once"}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch).result, selected("reject-once"))
}

func TestAnswerIsIdempotent(t *testing.T) {
	b := newBroker(t, confirm.Options{Store: memStore(t)})
	api := newHost("http")
	ch := ask(b, req("s", "k"), api)
	d := api.wait(t)
	a := confirm.Answer{OptionID: "allow-once"}
	if _, deduped, err := b.Answer(context.Background(), "s", d.ID(), "http", a); err != nil || deduped {
		t.Fatalf("first: deduped=%v err=%v", deduped, err)
	}
	if _, deduped, err := b.Answer(context.Background(), "s", d.ID(), "phone", a); err != nil || !deduped {
		t.Fatalf("same again: deduped=%v err=%v", deduped, err)
	}
	_, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "reject-once"})
	if !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("different: err = %v, want ErrConflict", err)
	}
	if !strings.HasSuffix(err.Error(), ": decision was already answered by http") { // one sentence, saying who
		t.Errorf("different: error %q, want it to say the decision was already answered by http", err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	v, _ := b.Decision(context.Background(), "s", d.ID())
	if evs := eventTypes(v); count(evs, "answered@http") != 1 || count(evs, "late_answer@http") != 1 {
		t.Fatalf("journal %v", evs)
	}
}

func TestOpenIsIdempotent(t *testing.T) {
	b := newBroker(t, confirm.Options{Store: memStore(t)})
	api := newHost("http")
	r := req("s", "epoch1/n7")
	ch1 := ask(b, r, api)
	d := api.wait(t)
	ch2 := ask(b, r, api)
	if id := confirm.DecisionID("s", "epoch1/n7"); d.ID() != id {
		t.Fatalf("id %s, want %s", d.ID(), id)
	}
	other := r
	other.Params = params("s", "allow-once:allow_once")
	if _, err := b.Ask(context.Background(), other, []confirm.Presenter{api}); !errors.Is(err, acp.ErrInvalidRequest) {
		t.Fatalf("same key, other params: err = %v", err)
	}
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch1).result, selected("allow-once"))
	jsonEq(t, await(t, ch2).result, selected("allow-once"))
	vs, err := b.Decisions(context.Background(), "s")
	if err != nil || len(vs) != 1 {
		t.Fatalf("decisions = %d, err %v", len(vs), err)
	}
	if len(api.presented) != 0 {
		t.Fatal("the second Ask presented the decision again")
	}
}

func TestNoEligibleHost(t *testing.T) {
	t.Run("no hosts", func(t *testing.T) {
		b := newBroker(t, confirm.Options{})
		got, err := b.Ask(context.Background(), req("s", "k"), nil)
		if err != nil {
			t.Fatal(err)
		}
		jsonEq(t, got, selected("reject-once"))
	})
	t.Run("all abstain", func(t *testing.T) {
		b := newBroker(t, confirm.Options{})
		ide, ws := newHost("ide"), newHost("ws")
		ch := ask(b, req("s", "k", "ok:allow_once", "never:reject_always"), ide, ws)
		d := ide.wait(t)
		ws.wait(t)
		b.Abstain(d.ID(), "ide", "disconnected")
		if d.Status() != store.StatusOpen {
			t.Fatal("closed while a host remained")
		}
		if err := b.AnswerResult(context.Background(), d.ID(), "ws", json.RawMessage(cancelledResult)); err != nil {
			t.Fatal(err)
		}
		jsonEq(t, await(t, ch).result, selected("never")) // reject_always when no reject_once
	})
	t.Run("present fails", func(t *testing.T) {
		b := newBroker(t, confirm.Options{})
		bad := newHost("bad")
		bad.presentErr = errors.New("queue full")
		got, _ := b.Ask(context.Background(), req("s", "k", "ok:allow_once"), []confirm.Presenter{bad})
		jsonEq(t, got, cancelledResult) // no reject option offered
	})
	t.Run("remove presenter", func(t *testing.T) {
		b := newBroker(t, confirm.Options{})
		ide := newHost("ide")
		ch := ask(b, req("s", "k"), ide)
		ide.wait(t)
		b.RemovePresenter("ide", "stdin closed")
		jsonEq(t, await(t, ch).result, selected("reject-once"))
	})
}

func TestNotPresentedHostCannotAnswer(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide := newHost("ide")
	ch := ask(b, req("s", "k"), ide)
	d := ide.wait(t)
	if err := b.AnswerResult(context.Background(), d.ID(), "intruder", json.RawMessage(selected("allow-once"))); !errors.Is(err, confirm.ErrNotPresented) {
		t.Fatalf("err = %v", err)
	}
	if err := b.AnswerResult(context.Background(), "no-such-id", "ide", json.RawMessage(selected("allow-once"))); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	if d.Status() != store.StatusOpen {
		t.Fatal("decision closed")
	}
	b.CancelSession("s", "test")
	jsonEq(t, await(t, ch).result, cancelledResult)
}

func TestCancelSession(t *testing.T) {
	b := newBroker(t, confirm.Options{Store: memStore(t)})
	ide, api, ws := newHost("ide"), newHost("http"), newHost("ws")
	ch1 := ask(b, req("s", "k1"), ide, api, ws)
	ch2 := ask(b, req("s", "k2"), ide, api, ws)
	chOther := ask(b, req("t", "k1"), ide)
	var inS []*confirm.Decision // presentation order across Asks is not fixed
	for range 3 {
		if d := ide.wait(t); d.SessionID() == "s" {
			inS = append(inS, d)
		}
	}
	d1, d2 := inS[0], inS[1]
	for range 2 {
		api.wait(t)
		ws.wait(t)
	}
	b.CancelSession("s", "session/cancel from ide")
	jsonEq(t, await(t, ch1).result, cancelledResult)
	jsonEq(t, await(t, ch2).result, cancelledResult)
	for _, d := range []*confirm.Decision{d1, d2} {
		if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); !errors.Is(err, confirm.ErrConflict) {
			t.Fatalf("late answer err = %v", err)
		}
		if err := b.AnswerResult(context.Background(), d.ID(), "ws", json.RawMessage(selected("allow-once"))); !errors.Is(err, confirm.ErrConflict) {
			t.Fatalf("late result err = %v", err)
		}
		v, _ := b.Decision(context.Background(), "s", d.ID())
		if v.Status != store.StatusCancelled || v.Reason != store.ReasonSessionCancelled {
			t.Fatalf("status %s reason %s", v.Status, v.Reason)
		}
	}
	for _, h := range []*fakeHost{ide, api, ws} {
		if got := len(h.withdrawals()); got < 2 {
			t.Errorf("%s: %d withdrawals, want 2", h.id, got)
		}
	}
	select {
	case <-chOther:
		t.Fatal("another session's decision was cancelled")
	default:
	}
	b.AgentExited()
	jsonEq(t, await(t, chOther).result, cancelledResult)
	v, _ := b.Decision(context.Background(), "t", confirm.DecisionID("t", "k1"))
	if v.Reason != store.ReasonAgentExited {
		t.Fatalf("reason = %s", v.Reason)
	}
}

func TestAgentCancelRequest(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide := newHost("ide")
	ch := ask(b, req("s", "e/n9"), ide)
	ide.wait(t)
	if !b.CancelRequest(confirm.DecisionID("s", "e/n9")) {
		t.Fatal("CancelRequest found nothing")
	}
	r := await(t, ch)
	if !errors.Is(r.err, acp.ErrRequestCancelled) || r.result != nil {
		t.Fatalf("Ask = %s, %v; want -32800", r.result, r.err)
	}
	if w := ide.withdrawals(); len(w) != 1 || w[0].Reason != store.ReasonAgentCancelled {
		t.Fatalf("withdrawals %+v", w)
	}
	if b.CancelRequest(confirm.DecisionID("s", "e/n9")) {
		t.Fatal("cancelled twice")
	}
}

func TestAskContextCancelled(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide := newHost("ide")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.Ask(ctx, req("s", "k"), []confirm.Presenter{ide})
		done <- err
	}()
	ide.wait(t)
	cancel(errors.New("relay stopping"))
	if err := <-done; err == nil || !strings.Contains(err.Error(), "relay stopping") {
		t.Fatalf("err = %v", err)
	}
}

func TestRevalidateStale(t *testing.T) {
	stale := errors.New("mode revision 3, decision made at 2")
	b := newBroker(t, confirm.Options{Revalidate: func(_ context.Context, s confirm.Snapshot) error {
		if s.ModeRevision != 3 {
			return stale
		}
		return nil
	}})
	api := newHost("http")
	r := req("s", "k")
	r.ModeRevision = 2
	ch := ask(b, r, api)
	d := api.wait(t)
	_, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if !errors.Is(err, confirm.ErrStale) || !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("err = %v", err)
	}
	jsonEq(t, await(t, ch).result, selected("reject-once"))
	if v := d.View(); v.Status != store.StatusCancelled || v.Reason != store.ReasonStale {
		t.Fatalf("status %s reason %s", v.Status, v.Reason)
	}

	// A reject needs no revalidation.
	ch = ask(b, req("s", "k2"), api)
	d = api.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "reject-once"}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch).result, selected("reject-once"))
}

func TestFreeText(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	api := newHost("http")
	r := req("s", "k")
	r.AllowFreeText = true
	ch := ask(b, r, api)
	d := api.wait(t)
	v, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{Text: "use rg instead"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != store.StatusAnswered || v.Answer.Text != "use rg instead" {
		t.Fatalf("view %+v", v)
	}
	jsonEq(t, await(t, ch).result, `{"outcome":{"outcome":"selected","optionId":"reject-once"},"_meta":{"acpmux":{"text":"use rg instead"}}}`)
}

func TestMaxOpenPerSession(t *testing.T) {
	b := newBroker(t, confirm.Options{MaxOpenPerSession: 2})
	ide := newHost("ide")
	ch1, ch2 := ask(b, req("s", "1"), ide), ask(b, req("s", "2"), ide)
	ide.wait(t)
	ide.wait(t)
	got, err := b.Ask(context.Background(), req("s", "3"), []confirm.Presenter{ide})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, selected("reject-once"))
	if len(ide.presented) != 0 {
		t.Fatal("the refused request was presented")
	}
	b.CancelSession("s", "")
	await(t, ch1)
	await(t, ch2)
}

// MaxOpen caps the open decisions of all sessions together: with two open
// in two sessions, a third session's request fails closed with its reject
// option without being presented, and a slot freed by an answer is usable
// again.
func TestOpenDecisionsAreCappedAcrossSessions(t *testing.T) {
	b := newBroker(t, confirm.Options{MaxOpen: 2})
	ide := newHost("ide")
	ch1, ch2 := ask(b, req("s1", "1"), ide), ask(b, req("s2", "1"), ide)
	ide.wait(t)
	ide.wait(t)
	got, err := b.Ask(context.Background(), req("s3", "1"), []confirm.Presenter{ide})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, selected("reject-once"))
	if len(ide.presented) != 0 {
		t.Fatal("the refused request was presented")
	}
	if all, _ := b.Decisions(context.Background(), "s3"); len(all) != 0 {
		t.Fatalf("the refused request opened %d decisions", len(all))
	}
	b.CancelSession("s1", "")
	await(t, ch1)
	ch3 := ask(b, req("s3", "2"), ide)
	ide.wait(t)
	b.CancelSession("s2", "")
	b.CancelSession("s3", "")
	await(t, ch2)
	await(t, ch3)
}

// A request of a session nobody created or attached to opens no decision:
// the agent gets the reject option (or cancelled when none is offered), and
// an invalid request still gets -32602.
func TestUnknownSessionIsRefusedWithoutADecision(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	got, err := b.RefuseUnknownSession(req("ghost", "1"))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, selected("reject-once"))
	got, err = b.RefuseUnknownSession(req("ghost", "2", "allow-once:allow_once"))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, got, cancelledResult)
	if b.HasSession("ghost") {
		t.Error("the broker tracks the unknown session")
	}
	if _, err := b.RefuseUnknownSession(confirm.Request{SessionID: "ghost", AgentKey: "3", Params: json.RawMessage(`{"sessionId":"ghost","options":[]}`)}); !errors.Is(err, acp.ErrInvalidParams) {
		t.Errorf("invalid request: err %v, want -32602", err)
	}
}

func TestToolCallMergeAndClassify(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: func(cmd string) confirm.Classification {
		if cmd == "rm -rf build" {
			return confirm.Classification{Class: "write", Reasons: []string{"rm deletes files"}}
		}
		return confirm.Classification{Class: "read-only"}
	}})
	b.ToolCallUpdate("s", json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"call_9","title":"Terminal","kind":"execute","status":"pending","rawInput":{"command":"rm -rf build"}}`))
	b.ToolCallUpdate("s", json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"call_9","title":"rm -rf build"}`))
	api := newHost("http")
	p := `{"sessionId":"s","toolCall":{"toolCallId":"call_9","status":"pending"},"options":[{"optionId":"y","name":"Yes","kind":"allow_once"},{"optionId":"n","name":"No","kind":"reject_once"}]}`
	ch := ask(b, confirm.Request{SessionID: "s", AgentKey: "k", Params: json.RawMessage(p), Cwd: "/repo"}, api)
	d := api.wait(t)
	v := d.View()
	if v.Title != "rm -rf build" || v.Command != "rm -rf build" || v.ToolCall.Kind == nil || *v.ToolCall.Kind != "execute" {
		t.Fatalf("merged view: title %q command %q", v.Title, v.Command)
	}
	if v.Classification == nil || v.Classification.Class != "write" || len(v.Warnings) != 1 {
		t.Fatalf("classification %+v warnings %v", v.Classification, v.Warnings)
	}
	s := d.Snapshot()
	if string(s.Request) != p || s.Cwd != "/repo" || len(s.RequestSHA256) != 64 || len(s.DisplayedTextSHA256) != 64 {
		t.Fatalf("snapshot %+v", s)
	}
	if !strings.Contains(s.DisplayedText, "command: rm -rf build\n") {
		t.Fatalf("displayed text %q", s.DisplayedText)
	}
	b.CancelSession("s", "")
	await(t, ch)
}

func TestAddPresenterLate(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide := newHost("ide")
	ch := ask(b, req("s", "k"), ide)
	ide.wait(t)
	web := newHost("web")
	web.onPresent = answerAfter(b, 0, selected("allow-once"))
	b.AddPresenter("s", web)
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	web.wg.Wait()
	if w := ide.withdrawals(); len(w) != 1 || w[0].By != "web" {
		t.Fatalf("ide withdrawals %+v", w)
	}
}

func TestSessionsView(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	b.TrackSession("a", "/a")
	ide := newHost("ide")
	ch := ask(b, req("b", "k"), ide)
	ide.wait(t)
	ss := b.Sessions()
	if len(ss) != 2 || ss[0].SessionID != "a" || ss[0].Cwd != "/a" || ss[1].OpenDecisions != 1 || ss[1].Cwd != "/work" {
		t.Fatalf("sessions %+v", ss)
	}
	b.CancelSession("b", "")
	await(t, ch)
	if ss := b.Sessions(); ss[1].OpenDecisions != 0 || ss[1].Decisions != 1 {
		t.Fatalf("sessions %+v", ss)
	}
}

func TestNotice(t *testing.T) {
	b := newBroker(t, confirm.Options{})
	ide, api := newHost("ide"), newHost("http")
	ch := ask(b, req("s", "k"), ide, api)
	d := ide.wait(t)
	api.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	w := ide.withdrawals()
	var n map[string]any
	if err := json.Unmarshal(confirm.Notice(d, w[0]), &n); err != nil {
		t.Fatal(err)
	}
	if n["decisionId"] != d.ID() || n["status"] != "answered" || n["resolvedBy"] != "http" || n["toolCallId"] != "call_1" {
		t.Fatalf("notice %v", n)
	}
	if n["optionId"] != "allow-once" || n["reason"] != "answered" {
		t.Fatalf("notice %v", n)
	}
}
