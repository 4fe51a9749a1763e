package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
)

// UserMessage reads as the innermost meaningful message: no "invalid
// answer", "jsonrpc2 error -32602" or "invalid params" prefix of a wrapped
// error, a question's field as "FIELD: REASON".
func TestUserMessageDropsWrappedPrefixes(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"field error", fmt.Errorf("%w: %w", confirm.ErrInvalidAnswer, &question.FieldError{Field: "content.count", Reason: "must be at most 10"}),
			"content.count: must be at most 10"},
		{"body error", &question.FieldError{Reason: "not a JSON object"}, "not a JSON object"},
		{"unoffered option", fmt.Errorf("%w: optionId %q was not offered", confirm.ErrInvalidAnswer, "x"), `optionId "x" was not offered`},
		{"two sentinels", fmt.Errorf("%w: %w: unknown scope %q", confirm.ErrInvalidAnswer, policy.ErrScopeRefused, "X"), `unknown scope "X"`},
		{"acp code", fmt.Errorf("%w: member %q is unknown", acp.ErrInvalidParams, "x"), `member "x" is unknown`},
		{"sentinel alone", fmt.Errorf("%w: %w", confirm.ErrInvalidAnswer, policy.ErrAlwaysUnavailable), policy.ErrAlwaysUnavailable.Error()},
		{"bare sentinel", store.ErrNotFound, store.ErrNotFound.Error()},
		{"joined", errors.Join(confirm.ErrConflict), confirm.ErrConflict.Error()},
		{"plain", errors.New("store: disk full"), "store: disk full"},
		{"nil", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := httpapi.UserMessage(tc.err); got != tc.want {
				t.Errorf("UserMessage(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}

// Every refused answer's body says one sentence in "message", with the
// machine-readable "code" (and a question's "field" and "reason") beside
// it: never the inner "invalid answer: jsonrpc2 error -32602: invalid
// params:" prefixes.
func TestRefusedAnswerBodyIsOneSentence(t *testing.T) {
	b := newBroker(t)
	base := server(t, b)
	ide := &slowIDE{presented: make(chan string, 4)}
	open(b, "e1/n1", ide, httpapi.Presenter{})
	perm := base + "/v1/sessions/sess_1/decisions/" + <-ide.presented
	params := `{"sessionId":"sess_1","message":"How many?","mode":"form","requestedSchema":{"type":"object",` +
		`"properties":{"count":{"type":"integer","maximum":10}},"required":["count"]}}`
	go b.AskQuestion(context.Background(), confirm.Request{SessionID: "sess_1", AgentKey: "e1/q1", Params: json.RawMessage(params)},
		[]confirm.Presenter{ide, httpapi.Presenter{}})
	q := base + "/v1/sessions/sess_1/decisions/" + <-ide.presented
	t.Cleanup(func() { b.AgentExited() })

	for _, tc := range []struct {
		url, body            string
		code, message, field string
	}{
		{perm, `{"optionId":"allow_always"}`, "invalid_answer", `optionId "allow_always" was not offered`, ""},
		{perm, `{"optionId":1}`, "invalid_body", "optionId must be a string", ""},
		{perm, `{"optionId":"allow-once","scope":"FOREVER"}`, "scope_refused", `unknown scope "FOREVER" (want ONCE, SESSION or ALWAYS)`, ""},
		{q, `{"action":"accept","content":{"count":11}}`, "invalid_answer", "content.count: must be at most 10", "content.count"},
		{q, `{"action":"Accept"}`, "invalid_answer", `action: "Accept" is not accept, decline or cancel`, "action"},
		{q, `{"action":"accept","content":{"count":1},"x":1}`, "invalid_body", `unknown member "x"`, ""},
	} {
		code, m := call(t, "POST", tc.url, tc.body)
		e, _ := m["error"].(map[string]any)
		if code != 400 || e["code"] != tc.code || e["message"] != tc.message || (tc.field != "" && e["field"] != tc.field) {
			t.Errorf("POST %s: %d %v, want 400 %s %q", tc.body, code, m, tc.code, tc.message)
		}
		if msg, _ := e["message"].(string); strings.Contains(msg, "jsonrpc2") || strings.Contains(msg, "invalid answer") || strings.Contains(msg, "invalid params") {
			t.Errorf("POST %s: message %q repeats an inner prefix", tc.body, msg)
		}
	}
}

// TestCutBodiesAreRefused: every strict prefix of an answer's body (a
// permission's and a question's), as a client that died mid-write sends
// it, gets 400 invalid_body, never a dropped connection.
func TestCutBodiesAreRefused(t *testing.T) {
	b := newBroker(t)
	base := server(t, b)
	ide := &slowIDE{presented: make(chan string, 4)}
	open(b, "e1/n1", ide, httpapi.Presenter{})
	perm := base + "/v1/sessions/sess_1/decisions/" + <-ide.presented
	t.Cleanup(func() { b.AgentExited() })
	for _, body := range []string{`{"optionId":"allow-once","scope":"ONCE"}`, `{"action":"accept","content":{"count":1,"tags":["a"]}}`} {
		for n := 1; n < len(body); n++ {
			code, m := call(t, "POST", perm, body[:n])
			if e, _ := m["error"].(map[string]any); code != 400 || e["code"] != "invalid_body" {
				t.Errorf("POST %s: %d %v, want 400 invalid_body", body[:n], code, m)
			}
		}
	}
}
