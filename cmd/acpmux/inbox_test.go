package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// sharedStates returns, for each store kind, a state shared by the
// processes of one test: a SQLite file, and a database of a throwaway
// PostgreSQL server (skipped as the optional suite when the server is not
// installed).
func sharedStates(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "state.db") },
		"postgres": func(t *testing.T) string { return pgtest.Start(t).Database(t) },
	}
}

// api is the decisions API of one acpmux process.
type api struct {
	url, token string
}

// do sends method path with body (JSON or "") and decodes the response
// into v (when not nil); it returns the status.
func (a api) do(t *testing.T, method, path, body string, v any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, a.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Errorf("%s %s: %d %s: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

// sharedView is what these tests read of a decision view.
type sharedView struct {
	ID, SessionID, Status, Reason, ResolvedBy string
	Delivered                                 bool
	Deduped                                   bool
	Error                                     struct{ Code, Message string }
	Decision                                  *struct{ Status, Reason, ResolvedBy string }
	Answer                                    *struct{ OptionID string }
	Bridge                                    *struct {
		ID, Name, Host, Cwd string
		Agent               []string
	}
}

// openDecisionOf waits (bounded) until api lists an open decision of
// session sid of bridge bid, and returns it.
func openDecisionOf(t *testing.T, a api, bid, sid string) sharedView {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var list struct{ Decisions []sharedView }
		if a.do(t, "GET", "/v1/sessions/"+sid+"/decisions?status=open&bridge="+bid, "", &list) == 200 && len(list.Decisions) > 0 {
			return list.Decisions[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no open decision of bridge %s, session %s", bid, sid)
	return sharedView{}
}

// bridgeProc is one "acpmux run" of these tests.
type bridgeProc struct {
	*runningRelay
	api
	id  string // its bridge id in the store
	log string // the scripted agent's log of what it read
}

var registeredRe = regexp.MustCompile(`bridge registered in the shared store.*bridge=([0-9a-f-]+)`)

// startBridge runs "acpmux run --headless --listen 127.0.0.1:0 --state
// state --name name -- agent..." and reads its bridge id from its log.
func startBridge(t *testing.T, state, name string, env []string, agent ...string) *bridgeProc {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	agentLog := filepath.Join(dir, "agent.ndjson")
	args := append([]string{"run", "--headless", "--listen", "127.0.0.1:0", "--token-file", tokenFile,
		"--state", state, "--name", name, "--"}, agent...)
	cmd := exec.Command("acpmux", args...)
	cmd.Env = append(append(os.Environ(), acptest.EnvLog+"="+agentLog), env...)
	r := startProc(t, cmd, listenRe)
	tok, _ := os.ReadFile(tokenFile)
	r.token = strings.TrimSpace(string(tok))
	b := &bridgeProc{runningRelay: r, api: api{r.apiURL, r.token}, log: agentLog}
	b.id = registeredRe.FindStringSubmatch(r.waitLog(t, "bridge registered"))[1]
	return b
}

// startProc starts cmd, reads its stderr until the line matching re
// (whose group 1 is host:port) and returns it running.
func startProc(t *testing.T, cmd *exec.Cmd, re *regexp.Regexp) *runningRelay {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := &runningRelay{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	r.out.Buffer(make([]byte, 1<<20), 1<<26)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			r.apiURL = "http://" + m[1]
			break
		}
	}
	if r.apiURL == "" {
		t.Fatal("acpmux did not log its listening address")
	}
	r.logLines = make(chan string, 1024)
	go func() {
		for sc.Scan() {
			select {
			case r.logLines <- sc.Text():
			default:
			}
		}
	}()
	return r
}

var inboxRe = regexp.MustCompile(`inbox listening.*url=http://([^/ ]+)`)

// startInbox runs "acpmux inbox --listen 127.0.0.1:0 --state state".
func startInbox(t *testing.T, state string) api {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	r := startProc(t, exec.Command("acpmux", "inbox", "--listen", "127.0.0.1:0", "--token-file", tokenFile, "--state", state), inboxRe)
	tok, _ := os.ReadFile(tokenFile)
	return api{r.apiURL, strings.TrimSpace(string(tok))}
}

// startSession initialises the agent and opens a session; it returns the
// agent's session id.
func (b *bridgeProc) startSession(t *testing.T) string {
	t.Helper()
	b.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	b.waitFor(t, "")
	b.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	m := b.waitFor(t, "")
	return m["result"].(map[string]any)["sessionId"].(string)
}

// answer posts optionID to decision v at a, naming v's bridge.
func answer(t *testing.T, a api, v sharedView, optionID string) (int, sharedView) {
	t.Helper()
	var got sharedView
	code := a.do(t, "POST", "/v1/sessions/"+v.SessionID+"/decisions/"+v.ID+"?bridge="+v.Bridge.ID,
		fmt.Sprintf(`{"optionId":%q}`, optionID), &got)
	return code, got
}

// TestRealAgentsAnsweredAcrossBridges: per store kind, two "acpmux run"
// processes share one --state, each with acp-go-sdk's example agent (which
// asks permission for an edit, no model): one decision of each is answered
// from the other bridge's API and one from "acpmux inbox"; each agent acts
// on the answer it got (allow applies the change, reject skips it). Then a
// bridge is killed (SIGKILL) with a decision open: after the lease the
// decision is cancelled with reason owner_lost, it has its audit row in
// acpmux audit, and an answer to it is refused.
func TestRealAgentsAnsweredAcrossBridges(t *testing.T) {
	agent := buildExample(t, "github.com/coder/acp-go-sdk/example/agent", t.TempDir())
	for kind, newState := range sharedStates(t) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			state := newState(t)
			a := startBridge(t, state, "alpha", nil, agent)
			b := startBridge(t, state, "beta", nil, agent)
			inbox := startInbox(t, state)
			sa, sb := a.startSession(t), b.startSession(t)
			prompt := func(p *bridgeProc, sid string, n int) {
				p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"go"}]}}`, 10+n, sid))
			}
			for round, via := range []string{"other bridge", "inbox"} {
				prompt(a, sa, round)
				prompt(b, sb, round)
				va, vb := openDecisionOf(t, inbox, a.id, sa), openDecisionOf(t, inbox, b.id, sb)
				if va.Bridge == nil || va.Bridge.Name != "alpha" || len(va.Bridge.Agent) != 1 || va.Bridge.Agent[0] != agent {
					t.Fatalf("bridge object of a's decision: %+v", va.Bridge)
				}
				fromA, fromB := b.api, a.api // each answered from the other bridge
				if via == "inbox" {
					fromA, fromB = inbox, inbox
				}
				if code, got := answer(t, fromA, va, "allow"); code != 200 || got.Status != "answered" || !got.Delivered {
					t.Fatalf("%s answering a's decision: %d %+v", via, code, got)
				}
				if code, got := answer(t, fromB, vb, "reject"); code != 200 || got.Status != "answered" {
					t.Fatalf("%s answering b's decision: %d %+v", via, code, got)
				}
				if !turnSays(t, a, "successfully updated the configuration") || !turnSays(t, b, "skip the configuration update") {
					t.Fatalf("round %d (%s): an agent did not act on the answer it was sent", round, via)
				}
			}
			prompt(a, sa, 5)
			lost := openDecisionOf(t, inbox, a.id, sa)
			a.cmd.Process.Kill()
			deadline := time.Now().Add(30 * time.Second)
			var v sharedView
			for time.Now().Before(deadline) {
				inbox.do(t, "GET", "/v1/sessions/"+sa+"/decisions/"+lost.ID, "", &v)
				if v.Status != "open" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if v.Status != "cancelled" || v.Reason != "owner_lost" {
				t.Fatalf("decision of the killed bridge: %s/%s, want cancelled/owner_lost", v.Status, v.Reason)
			}
			// The sweep that closed it wrote its audit row (docs/policy.md:
			// every permission request becomes one plan item).
			var rows []struct{ ID, Status, Reason, Decision string }
			for time.Now().Before(deadline) {
				rows = nil
				if code, out, errs := runCLI("audit", "--state", state, "--session", sa, "--json"); code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
					t.Fatalf("acpmux audit: %d %q %q", code, out, errs)
				}
				if len(rows) > 0 && rows[len(rows)-1].ID == lost.ID {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if len(rows) == 0 || rows[len(rows)-1] != (struct{ ID, Status, Reason, Decision string }{lost.ID, "cancelled", "owner_lost", "deny"}) {
				t.Fatalf("audit rows of the killed bridge's session: %+v, want the last one %s cancelled/owner_lost/deny", rows, lost.ID)
			}
			var refused struct{ Error struct{ Code string } }
			if code := b.do(t, "POST", "/v1/sessions/"+sa+"/decisions/"+lost.ID, `{"optionId":"allow"}`, &refused); code != 409 {
				t.Fatalf("answer to an owner_lost decision: %d %+v, want 409", code, refused)
			}
		})
	}
}

// turnSays reads the bridge's IDE side until the prompt response and
// reports whether an agent message contained want.
func turnSays(t *testing.T, b *bridgeProc, want string) bool {
	t.Helper()
	saw := false
	for b.out.Scan() {
		line := b.out.Bytes()
		saw = saw || bytes.Contains(line, []byte(want))
		if bytes.Contains(line, []byte(`"stopReason"`)) {
			return saw
		}
	}
	t.Fatal("stdout closed before the prompt response")
	return false
}
