package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
)

// TestDecisionsAnswerConflictSentences: each reason the API answers 409
// gets its own sentence from acpmux decisions answer: someone else
// answered first (who, with what), the decision timed out, it was
// cancelled (and why), the request went stale.
func TestDecisionsAnswerConflictSentences(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	tok, err := httpapi.LoadOrCreateToken(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := confirm.NewBroker(confirm.Options{Logger: slog.New(slog.DiscardHandler),
		Revalidate: func(_ context.Context, s confirm.Snapshot) error {
			if s.SessionID == "stale" {
				return errors.New("the mode changed")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(b, httpapi.Options{Addr: ln.Addr().String(), Token: tok, Logger: slog.New(slog.DiscardHandler)})}
	go srv.Serve(ln)
	var asks sync.WaitGroup
	t.Cleanup(func() { b.AgentExited(); asks.Wait(); srv.Close() })
	open := func(session string, timeout time.Duration) string {
		params := `{"sessionId":"` + session + `","toolCall":{"toolCallId":"c1","title":"Run make"},` +
			`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`
		asks.Go(func() {
			b.Ask(context.Background(), confirm.Request{SessionID: session, AgentKey: "k", Params: json.RawMessage(params), Timeout: timeout},
				[]confirm.Presenter{httpapi.Presenter{}})
		})
		id := confirm.DecisionID(session, "k")
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
			if _, err := b.Decision(context.Background(), session, id); err == nil {
				return id
			}
		}
		t.Fatalf("decision of %s never opened", session)
		return ""
	}
	answered := open("answered", 0)
	if _, _, err := b.Answer(context.Background(), "answered", answered, "ide-2", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	timedOut := open("timedout", time.Millisecond)
	for d, _ := b.Decision(context.Background(), "timedout", timedOut); d.Status == "open"; d, _ = b.Decision(context.Background(), "timedout", timedOut) {
		time.Sleep(time.Millisecond)
	}
	cancelled := open("cancelled", 0)
	b.CancelSession("cancelled", "the IDE cancelled the turn")
	stale := open("stale", 0) // approving it fails revalidation (a reject is never revalidated)

	tests := []struct {
		name, session, id, option string
		want                      []string
	}{
		{"answered by another host", "answered", answered, "reject-once", []string{"ide-2 already answered decision " + answered, "with option allow-once; your answer was not used"}},
		{"timed out", "timedout", timedOut, "reject-once", []string{"decision " + timedOut + " timed out at", "before your answer arrived; the agent got its reject option"}},
		{"cancelled", "cancelled", cancelled, "reject-once", []string{"decision " + cancelled + " was cancelled at", "(the prompt turn was cancelled) before your answer arrived"}},
		{"stale", "stale", stale, "allow-once", []string{"the request changed after it was shown", "rather than approve what you did not see"}},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runDecisions("answer", tt.id, "--session", tt.session, "--option", tt.option,
				"--url", "http://"+ln.Addr().String(), "--token-file", tokenFile)
			if code != 1 || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q: want 1 and one line", code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr %q lacks %q", errs, w)
				}
			}
			if other, dup := seen[errs]; dup {
				t.Errorf("the same sentence as %s", other)
			}
			seen[errs] = tt.name
		})
	}
}

// TestDecisionsAnswerScope: --scope reaches the API as the answer's
// "scope" (case-insensitive on the command line): ALWAYS without a
// durable store is refused by the broker and the decision stays open;
// SESSION is taken.
func TestDecisionsAnswerScope(t *testing.T) {
	base, tf, id, result := decisionsServer(t)
	conn := []string{"--url", base, "--token-file", tf}
	code, _, errs := runDecisions(append([]string{"answer", id, "--session", "sess_1", "--option", "allow-once", "--scope", "always"}, conn...)...)
	if code != 1 || !strings.Contains(errs, "always_unavailable") {
		t.Fatalf("--scope always without a durable store: %d %q", code, errs)
	}
	code, out, errs := runDecisions(append([]string{"answer", id, "--session", "sess_1", "--option", "allow-once", "--scope", "SESSION"}, conn...)...)
	if code != 0 || !strings.Contains(out, "answered by http") {
		t.Fatalf("--scope SESSION: %d %q %q", code, out, errs)
	}
	if got := string(<-result); !strings.Contains(got, `"optionId":"allow-once"`) {
		t.Fatalf("agent got %s", got)
	}
}
