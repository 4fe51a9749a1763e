package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
)

// decisionsServer runs the API with one open decision and returns the base
// URL, the token file, the decision id and the channel of the agent's result.
func decisionsServer(t *testing.T) (base, tokenFile, id string, result <-chan json.RawMessage) {
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
	srv := &http.Server{Handler: httpapi.New(b, httpapi.Options{Addr: ln.Addr().String(), Token: tok,
		Logger: slog.New(slog.DiscardHandler)})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	params := `{"sessionId":"sess_1","toolCall":{"toolCallId":"c1","title":"Run rm\u202e -rf","rawInput":{"command":"rm -rf build"}},` +
		`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`
	ch := make(chan json.RawMessage, 1)
	asked := make(chan struct{})
	shown := newPresentSignal()
	go func() {
		defer close(asked)
		r, _ := b.Ask(context.Background(), confirm.Request{SessionID: "sess_1", AgentKey: "e/1", Params: json.RawMessage(params)},
			[]confirm.Presenter{shown})
		ch <- r
	}()
	t.Cleanup(func() {
		b.AgentExited()
		<-asked
		srv.Close()
		<-served
	})
	id = confirm.DecisionID("sess_1", "e/1")
	select {
	case <-shown.presented: // open: the API lists it
	case <-time.After(10 * time.Second):
		t.Fatal("the decision was never presented to the API")
	}
	// Present has been called; the journal's "presented" event is written
	// just after it returns. Wait for it, so a test reading the journal
	// sees the same two lines every run.
	for deadline := time.Now().Add(10 * time.Second); ; {
		v, err := b.Decision(context.Background(), "sess_1", id)
		if err == nil && len(v.Events) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the presented event never reached the journal: %v %v", v.Events, err)
		}
		runtime.Gosched()
	}
	return "http://" + ln.Addr().String(), tokenFile, id, ch
}

// presentSignal is the API as a host ([httpapi.Presenter]) that closes
// presented once it has been shown a decision: from then on the API lists
// the decision.
type presentSignal struct {
	httpapi.Presenter
	presented chan struct{}
	once      *sync.Once
}

func newPresentSignal() presentSignal {
	return presentSignal{presented: make(chan struct{}), once: new(sync.Once)}
}

func (p presentSignal) Present(d *confirm.Decision) error {
	err := p.Presenter.Present(d)
	p.once.Do(func() { close(p.presented) })
	return err
}

func runDecisions(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"decisions"}, args...), stdio{strings.NewReader(""), &out, &errb})
	return code, out.String(), errb.String()
}

func TestDecisionsCLI(t *testing.T) {
	base, tf, id, result := decisionsServer(t)
	conn := []string{"--url", base, "--token-file", tf}

	code, out, errs := runDecisions(append([]string{"list"}, conn...)...)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "open") || !strings.Contains(out, "SESSION") {
		t.Fatalf("list: %d %q %q", code, out, errs)
	}
	code, out, _ = runDecisions(append([]string{"list", "--session", "sess_1", "--status", "answered", "--json"}, conn...)...)
	if code != 0 || strings.Contains(out, id) {
		t.Fatalf("list answered: %d %q", code, out)
	}
	code, out, errs = runDecisions(append([]string{"show", id, "--session", "sess_1"}, conn...)...)
	if code != 0 || !strings.Contains(out, "--option allow-once") || !strings.Contains(out, "command   rm -rf build") {
		t.Fatalf("show: %d %q %q", code, out, errs)
	}
	if !strings.Contains(out, `\u202e`) {
		t.Fatalf("show printed a bidi control raw: %q", out)
	}
	code, _, errs = runDecisions(append([]string{"answer", id, "--session", "sess_1", "--option", "allow_always"}, conn...)...)
	if code != 1 || !strings.Contains(errs, "invalid_answer") {
		t.Fatalf("unoffered answer: %d %q", code, errs)
	}
	code, out, errs = runDecisions(append([]string{"answer", id, "--option", "allow-once"}, conn...)...) // the session found as show finds it
	if code != 0 || !strings.Contains(out, "answered by http: option allow-once") {
		t.Fatalf("answer: %d %q %q", code, out, errs)
	}
	if got := string(<-result); got != `{"outcome":{"outcome":"selected","optionId":"allow-once"}}` {
		t.Fatalf("agent got %s", got)
	}
	code, out, _ = runDecisions(append([]string{"answer", id, "--session", "sess_1", "--option", "allow-once"}, conn...)...)
	if code != 0 || !strings.Contains(out, "same answer") {
		t.Fatalf("repeat: %d %q", code, out)
	}
	code, _, errs = runDecisions(append([]string{"answer", id, "--session", "sess_1", "--option", "reject-once"}, conn...)...)
	if code != 1 || !strings.Contains(errs, "http already answered decision "+id) || !strings.Contains(errs, "option allow-once; your answer was not used") {
		t.Fatalf("conflict: %d %q", code, errs)
	}
	code, out, _ = runDecisions(append([]string{"show", id, "--session", "sess_1", "--json"}, conn...)...)
	var v map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v["status"] != "answered" {
		t.Fatalf("show --json: %d %q", code, out)
	}
	code, _, errs = runDecisions(append([]string{"show", "nope", "--session", "sess_1"}, conn...)...)
	if code != 1 || errs != "acpmux decisions: no decision nope in session sess_1\n" {
		t.Fatalf("show missing: %d %q", code, errs)
	}
	// Without --session the decision is found in the sessions the API lists.
	code, out, errs = runDecisions(append([]string{"show", id}, conn...)...)
	if code != 0 || !strings.Contains(out, "session   sess_1") || !strings.Contains(out, "answered") {
		t.Fatalf("show without --session: %d %q %q", code, out, errs)
	}
	code, _, errs = runDecisions(append([]string{"show", "nope"}, conn...)...)
	if code != 1 || !strings.Contains(errs, "no decision nope in any of the 1 sessions") {
		t.Fatalf("show missing without --session: %d %q", code, errs)
	}
}

func TestDecisionsCLIErrors(t *testing.T) {
	base, tf, _, _ := decisionsServer(t)
	wrong := filepath.Join(t.TempDir(), "wrong")
	os.WriteFile(wrong, []byte("not-the-token\n"), 0o600)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no subcommand", []string{"--url", base}, 2, "missing subcommand"},
		{"unknown subcommand", []string{"approve", "--url", base}, 2, "unknown subcommand"},
		{"answer without session, unknown id", []string{"answer", "nosuch", "--option", "o", "--url", base, "--token-file", tf}, 1, "no decision nosuch in any of the"},
		{"scope of a question", []string{"answer", "x", "--session", "s", "--action", "accept", "--scope", "SESSION", "--url", base}, 2, "--scope is for"},
		{"unknown scope", []string{"answer", "x", "--session", "s", "--option", "o", "--scope", "forever", "--url", base}, 2, "want ONCE, SESSION or ALWAYS"},
		{"answer without option", []string{"answer", "x", "--session", "s", "--url", base}, 2, "--option or --text"},
		{"no url", []string{"list", "--url", ""}, 2, "--url is required"},
		{"bad flag", []string{"list", "--bogus"}, 2, "flag provided but not defined: --bogus"},
		{"bad status", []string{"list", "--status", "done", "--url", base}, 2, "--status"},
		{"missing token file", []string{"list", "--url", base, "--token-file", "/nonexistent/token"}, 1, "no token file /nonexistent/token: pass the --token-file"},
		{"wrong token", []string{"list", "--url", base, "--token-file", wrong}, 1, "(unauthorized, HTTP 401)"},
		{"unknown decision", []string{"show", "nosuch", "--session", "sess_1", "--url", base, "--token-file", tf}, 1, "acpmux decisions: no decision nosuch in session sess_1\n"},
		{"unreachable", []string{"list", "--url", "http://127.0.0.1:1", "--token-file", tf}, 1,
			"no acpmux is listening at http://127.0.0.1:1; acpmux run --listen and acpmux inbox log it"},
		{"field without =", []string{"answer", "x", "--session", "s", "--action", "accept", "--field", "env", "--url", base}, 2,
			`invalid value "env" for flag --field: want NAME=VALUE, e.g. --field env=…`},
		{"negative --after", []string{"watch", "--after", "-1", "--url", base}, 2,
			`invalid value "-1" for flag --after: want 0 (replay every stored event) or the positive id of an event`},
		{"--after not a number", []string{"watch", "--after", "abc", "--url", base}, 2,
			`invalid value "abc" for flag --after: want 0 (replay every stored event) or the positive id of an event`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runDecisions(tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.msg) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tt.code, errs, tt.msg)
			}
		})
	}
	code, out, _ := runDecisions("--help")
	if code != 0 || !strings.Contains(out, "acpmux decisions answer DECISION_ID") || !strings.Contains(out, "-token-file") {
		t.Fatalf("help: %d %q", code, out)
	}
}

// TestSafeEscapesHiddenCharacters: the CLI prints agent text with every
// hidden character escaped inside quotes (hidden.Rune), including
// the ones unicode.IsPrint lets through (variation selectors, Hangul
// fillers) and those a hand list missed; plain text is printed as it is.
func TestSafeEscapesHiddenCharacters(t *testing.T) {
	tests := []struct{ in, want string }{
		{"rm -rf build", "rm -rf build"},
		{"caf\u00e9 \u4e2d", "caf\u00e9 \u4e2d"},
		{"cat \u202egnp.txt", `"cat \u202egnp.txt"`},
		{"a\u1680b", `"a\u1680b"`},
		{"x\U000110bd\U0001bca0", `"x\U000110bd\U0001bca0"`},
		{"ls\u115f \ufe0f", `"ls\u115f \ufe0f"`},
		{"echo \"a\\b\"\t\u200b", `"echo \"a\\b\"\u0009\u200b"`},
	}
	for _, tt := range tests {
		if got := safe(tt.in); got != tt.want {
			t.Errorf("safe(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
