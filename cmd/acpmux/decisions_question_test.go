package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
)

// questionServer runs the API with one open form question (a required
// integer "count" and a boolean "dry") and returns what decisionsServer does.
func questionServer(t *testing.T) (base, tokenFile, id string, result <-chan json.RawMessage) {
	t.Helper()
	return questionServerWith(t, `{"type":"object",`+
		`"properties":{"count":{"type":"integer","maximum":10},"dry":{"type":"boolean"}},"required":["count"]}`)
}

// questionServerWith is questionServer for a form question with the
// requested schema schema.
func questionServerWith(t *testing.T, schema string) (base, tokenFile, id string, result <-chan json.RawMessage) {
	t.Helper()
	tokenFile = filepath.Join(t.TempDir(), "token")
	tok, err := httpapi.LoadOrCreateToken(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := confirm.NewBroker(confirm.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(b, httpapi.Options{Addr: ln.Addr().String(), Token: tok, Logger: slog.New(slog.DiscardHandler)})}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(ln) }()
	params := `{"sessionId":"sess_1","message":"How many?","mode":"form","requestedSchema":` + schema + `}`
	ch := make(chan json.RawMessage, 1)
	asked := make(chan struct{})
	shown := newPresentSignal()
	go func() {
		defer close(asked)
		r, _ := b.AskQuestion(context.Background(), confirm.Request{SessionID: "sess_1", AgentKey: "e/1", Params: json.RawMessage(params)},
			[]confirm.Presenter{shown})
		ch <- r
	}()
	t.Cleanup(func() { b.AgentExited(); <-asked; srv.Close(); <-served })
	id = confirm.DecisionID("sess_1", "e/1")
	select {
	case <-shown.presented: // open: the API lists it
	case <-time.After(10 * time.Second):
		t.Fatal("the decision was never presented to the API")
	}
	return "http://" + ln.Addr().String(), tokenFile, id, ch
}

// TestDecisionsAnswerQuestionWithFields: show lists the question's fields;
// --field values typed by the schema are refused when out of range (exit
// 1, the field named) and then accepted; the agent gets the typed content.
func TestDecisionsAnswerQuestionWithFields(t *testing.T) {
	base, tf, id, result := questionServer(t)
	conn := []string{"--url", base, "--token-file", tf, "--session", "sess_1"}
	code, out, errs := runDecisions(append([]string{"show", id}, conn...)...)
	if code != 0 || !strings.Contains(out, "How many?") || !strings.Contains(out, "--field count=") {
		t.Fatalf("show: %d %q %q", code, out, errs)
	}
	code, _, errs = runDecisions(append([]string{"answer", id, "--action", "accept", "--field", "count=11"}, conn...)...)
	if code != 1 || !strings.Contains(errs, "content.count") {
		t.Fatalf("out of range: %d %q", code, errs)
	}
	code, out, errs = runDecisions(append([]string{"answer", id, "--action", "accept", "--field", "count=4", "--field", "dry=true"}, conn...)...)
	if code != 0 || !strings.Contains(out, "answered") {
		t.Fatalf("answer: %d %q %q", code, out, errs)
	}
	if got := string(<-result); got != `{"action":"accept","content":{"count":4,"dry":true}}` {
		t.Fatalf("agent got %s", got)
	}
	if code, _, errs := runDecisions(append([]string{"answer", id, "--action", "decline", "--option", "x"}, conn...)...); code != 2 {
		t.Fatalf("--action with --option: %d %q", code, errs)
	}
}

// TestDecisionsAnswerQuestionWithContent: --content JSON is sent as the
// answer's content.
func TestDecisionsAnswerQuestionWithContent(t *testing.T) {
	base, tf, id, result := questionServer(t)
	conn := []string{"--url", base, "--token-file", tf, "--session", "sess_1"}
	if code, out, errs := runDecisions(append([]string{"answer", id, "--action", "accept", "--content", `{"count":2}`}, conn...)...); code != 0 {
		t.Fatalf("answer: %d %q %q", code, out, errs)
	}
	if got := string(<-result); got != `{"action":"accept","content":{"count":2}}` {
		t.Fatalf("agent got %s", got)
	}
}

// TestDecisionsRefusalIsOneSentence: a refused answer prints one sentence,
// the server's message with its code and status after it, and a --field
// the CLI itself refuses names the field: never the inner "invalid answer",
// "jsonrpc2 error -32602" or "invalid params" prefixes.
func TestDecisionsRefusalIsOneSentence(t *testing.T) {
	base, tf, id, _ := questionServer(t)
	conn := []string{"--url", base, "--token-file", tf, "--session", "sess_1"}
	for _, tc := range []struct{ field, want string }{
		{"count=11", "acpmux decisions: content.count: must be at most 10 (invalid_answer, HTTP 400)\n"},
		{"nope=1", "acpmux decisions: content.nope: is not a property of the requested schema\n"},
	} {
		code, _, errs := runDecisions(append([]string{"answer", id, "--action", "accept", "--field", tc.field}, conn...)...)
		if code != 1 || errs != tc.want {
			t.Errorf("--field %s: exit %d, stderr %q, want 1 and %q", tc.field, code, errs, tc.want)
		}
	}
}

// TestDecisionsShowListsFieldLimits: show prints, for each field of a form
// question, its enum values (the const to type, with its title), length,
// pattern, format, range, item count and default, in aligned columns.
func TestDecisionsShowListsFieldLimits(t *testing.T) {
	base, tf, id, _ := questionServerWith(t, `{"type":"object","properties":{`+
		`"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]},`+
		`"size":{"type":"string","enum":["s","m"]},`+
		`"name":{"type":"string","minLength":2,"maxLength":20,"pattern":"^[a-z]+$"},`+
		`"mail":{"type":"string","format":"email"},`+
		`"count":{"type":"integer","minimum":1,"maximum":10,"default":3},`+
		`"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":1,"maxItems":2},`+
		`"dry":{"type":"boolean"}},"required":["count"]}`)
	code, out, errs := runDecisions("show", id, "--url", base, "--token-file", tf, "--session", "sess_1")
	if code != 0 {
		t.Fatalf("show: %d %q %q", code, out, errs)
	}
	for _, want := range []string{
		"  --field color=…  string; one of: r (Red), g (Green)\n",
		"  --field size=…   string; one of: s, m\n",
		"  --field name=…   string; 2 to 20 characters; pattern ^[a-z]+$\n",
		"  --field mail=…   string; format email\n",
		"  --field count=…  integer (required); at least 1; at most 10; default 3\n",
		"  --field tags=…   array; any of (comma-separated): a, b, c; 1 to 2 items\n",
		"  --field dry=…    boolean\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}
