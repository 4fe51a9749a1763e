package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/internal/waitfile"
)

const permScriptHead = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
`

// permRequest is the agent's permission request with id n: allow_once
// "allow" and reject_once "reject" are offered.
func permRequest(n int) string {
	return fmt.Sprintf(`send {"jsonrpc":"2.0","id":"perm-%d","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c%d","title":"rm -rf build","kind":"execute","rawInput":{"command":"rm -rf build"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}`+"\n", n, n)
}

// brokerFixture is a bridge with a confirmation broker, the decisions HTTP
// API on a test server, and an IDE host that has started a prompt turn.
type brokerFixture struct {
	t        *testing.T
	bridge   *bridge.Bridge
	broker   *confirm.Broker
	api      *httptest.Server
	token    string
	ide      *testHost
	add      func(id string, blocking bool, queue int) *testHost
	agentLog string
}

func newBrokerFixture(t *testing.T, script string, timeout time.Duration, withAPI bool, logTo ...io.Writer) *brokerFixture {
	t.Helper()
	w := io.Discard
	if len(logTo) > 0 {
		w = logTo[0] // the bridge's and broker's log, for a test that waits on an event only the log shows
	}
	log := slog.New(slog.NewTextHandler(w, nil))
	// The circuit breaker is off: these tests deny many requests in a row.
	off := confirm.Breaker{Consecutive: -1, WindowMax: -1}
	br, err := confirm.NewBroker(confirm.Options{DefaultTimeout: timeout, Logger: log, Breaker: off})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	brDone := make(chan struct{})
	go func() { defer close(brDone); br.Run(ctx) }()
	var extra []confirm.Presenter
	f := &brokerFixture{t: t, broker: br, token: "test-token"}
	if withAPI {
		extra = append(extra, httpapi.Presenter{})
		f.api = httptest.NewUnstartedServer(nil)
		routes := map[string]http.Handler{"GET /acp": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f.bridge.ServeWebSocket(w, r, wsQueueLen)
		})}
		f.api.Config.Handler = httpapi.New(br, httpapi.Options{Addr: f.api.Listener.Addr().String(), Token: f.token, Logger: log, Routes: routes})
		f.api.Start()
		t.Cleanup(f.api.Close)
	}
	f.bridge, f.add, f.agentLog = startBridge(t, script, bridge.Options{Broker: br, Presenters: extra, Logger: log})
	t.Cleanup(func() { cancel(); <-brDone })
	f.ide = f.add("ide", true, 0)
	f.ide.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	f.ide.next()
	f.ide.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	f.ide.next()
	f.ide.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	return f
}

// agentGot returns the responses the agent received to its permission
// requests, by request id.
func (f *brokerFixture) agentGot() map[string]string {
	f.t.Helper()
	data, _ := os.ReadFile(f.agentLog)
	got := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || m.Method != "" || !bytes.HasPrefix(m.ID, []byte(`"perm-`)) {
			continue
		}
		var id string
		json.Unmarshal(m.ID, &id)
		if _, dup := got[id]; dup {
			got[id] = "DUPLICATE"
			continue
		}
		got[id] = string(m.Result) + string(m.Error)
	}
	return got
}

// waitAgent waits until the agent has received a response to perm-n.
func (f *brokerFixture) waitAgent(n int) string {
	f.t.Helper()
	id := fmt.Sprintf("perm-%d", n)
	_, err := waitfile.Until(f.agentLog, 10*time.Second, func([]byte) bool { _, ok := f.agentGot()[id]; return ok })
	if err != nil {
		f.t.Fatalf("the agent got no response to %s", id)
	}
	return f.agentGot()[id]
}

// waitAgentLog returns once the agent has read a line containing text:
// the bridge forwards a host's messages in order, so a notification sent
// after a host's answer reaches the agent after that answer was dealt with.
func (f *brokerFixture) waitAgentLog(text string) {
	f.t.Helper()
	if _, err := waitfile.Contains(f.agentLog, text, 5*time.Second); err != nil {
		f.t.Fatalf("%q never reached the agent: %v", text, err)
	}
}

// expectPermission reads host messages until a permission request and
// returns its id and params.
func expectPermission(t *testing.T, h *testHost) (id any, params map[string]any) {
	t.Helper()
	for {
		m := h.next()
		if m["method"] == "session/request_permission" {
			return m["id"], m["params"].(map[string]any)
		}
	}
}

func (f *brokerFixture) http(method, path, body string) (int, map[string]any) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.api.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+f.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// wsQueueLen is the queue of WebSocket hosts in these tests.
var wsQueueLen = 256

const selectedAllow = `{"outcome":{"outcome":"selected","optionId":"allow"}}`
const selectedReject = `{"outcome":{"outcome":"selected","optionId":"reject"}}`

// TestAPIAnswerBeatsSlowIDE: the IDE is shown the request and never
// answers; the HTTP API answers; the agent gets that answer, built by the
// bridge, and the IDE's copy is withdrawn with $/cancel_request and the
// resolved notice.
func TestAPIAnswerBeatsSlowIDE(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+permRequest(1)+"recv\nwaiteof\n", time.Minute, true)
	ideID, params := expectPermission(t, f.ide)
	meta := params["_meta"].(map[string]any)["acpmux"].(map[string]any)
	did := meta["decisionId"].(string)
	if _, ok := meta["warnings"].([]any); !ok {
		t.Errorf("_meta.acpmux.warnings is %v, want a list", meta["warnings"])
	}
	code, body := f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"optionId":"allow"}`)
	if code != 200 || body["status"] != "answered" {
		t.Fatalf("POST answer: %d %v", code, body)
	}
	if got := f.waitAgent(1); got != selectedAllow {
		t.Errorf("agent got %s, want %s", got, selectedAllow)
	}
	var cancelled, resolved bool
	for !cancelled || !resolved {
		m := f.ide.next()
		switch m["method"] {
		case "$/cancel_request":
			cancelled = m["params"].(map[string]any)["requestId"] == ideID
		case bridge.MethodPermissionResolved:
			p := m["params"].(map[string]any)
			resolved = p["decisionId"] == did && p["status"] == "answered" && p["optionId"] == "allow"
			if !resolved {
				t.Fatalf("resolved notice %v", p)
			}
		}
	}
	// The same answer again is idempotent; a different one conflicts.
	if code, body := f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"optionId":"allow"}`); code != 200 || body["deduped"] != true {
		t.Errorf("repeat answer: %d %v, want 200 deduped", code, body)
	}
	if code, _ := f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"optionId":"reject"}`); code != 409 {
		t.Errorf("different answer after close: %d, want 409", code)
	}
	// A late answer from the IDE to its withdrawn copy changes nothing.
	// A notification sent after it is forwarded after it is handled: once
	// the agent has the notification, the late answer has been dealt with.
	f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, ideID, selectedReject))
	f.ide.send(`{"jsonrpc":"2.0","method":"_test/marker","params":{}}`)
	f.waitAgentLog("_test/marker")
	if got := f.agentGot()["perm-1"]; got != selectedAllow {
		t.Errorf("after the IDE's late answer the agent's record is %s", got)
	}
}

// TestInvalidIDEAnswersFailClosed: forged, unoffered, case-variant,
// duplicate-key and malformed answers from the only host never approve;
// the host abstains, no eligible host remains, and the agent gets the
// offered reject option.
func TestInvalidIDEAnswersFailClosed(t *testing.T) {
	answers := []string{
		`{"outcome":{"outcome":"selected","optionId":"allow_always"}}`,
		`{"outcome":{"outcome":"selected","optionId":"ALLOW"}}`,
		`{"outcome":{"outcome":"selected","optionId":"allow "}}`,
		`{"outcome":{"outcome":"selected","OptionId":"allow"}}`,
		`{"outcome":{"outcome":"selected","optionid":"allow"}}`,
		`{"outcome":{"outcome":"selected","optionId":"reject","optionId":"allow"}}`,
		`{"outcome":{"outcome":"selected","optionId":"reject"},"outcome":{"outcome":"selected","optionId":"allow"}}`,
		`{"outcome":{"outcome":"approved","optionId":"allow"}}`,
		`{"outcome":{"outcome":"selected"}}`,
		`{"optionId":"allow"}`,
		`{"outcome":"allow_once"}`,
		`{"approved":true}`,
		`"allow"`,
	}
	var script strings.Builder
	script.WriteString(permScriptHead)
	for i := range answers {
		script.WriteString(permRequest(i))
		script.WriteString("recv\n")
	}
	f := newBrokerFixture(t, script.String(), time.Minute, false)
	for i, a := range answers {
		id, _ := expectPermission(t, f.ide)
		f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, id, a))
		if got := f.waitAgent(i); got != selectedReject {
			t.Errorf("answer %s: agent got %s, want the offered reject option", a, got)
		}
	}
}

// TestTimeoutFailsClosed: nobody answers; at the deadline the agent gets
// the offered reject option (not cancelled, which would end its turn).
func TestTimeoutFailsClosed(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+permRequest(1)+"recv\n", 300*time.Millisecond, true)
	expectPermission(t, f.ide)
	if got := f.waitAgent(1); got != selectedReject {
		t.Errorf("agent got %s, want %s", got, selectedReject)
	}
}

// TestSessionCancelAnswersCancelled: session/cancel from the IDE answers
// the open permission request with outcome cancelled and is forwarded.
func TestSessionCancelAnswersCancelled(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+permRequest(1)+"recv\nrecv\n", time.Minute, true)
	expectPermission(t, f.ide)
	f.ide.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}`)
	if got := f.waitAgent(1); got != `{"outcome":{"outcome":"cancelled"}}` {
		t.Errorf("agent got %s, want cancelled", got)
	}
	code, body := f.http("GET", "/v1/sessions/s1/decisions", "")
	ds, _ := body["decisions"].([]any)
	if code != 200 || len(ds) != 1 || ds[0].(map[string]any)["status"] != "cancelled" {
		t.Errorf("decisions after cancel: %d %v", code, body)
	}
}

// TestAgentExitCancelsDecisions: the agent dies with a decision open; the
// decision becomes cancelled (agent_exited) and the IDE's copy is withdrawn.
func TestAgentExitCancelsDecisions(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+permRequest(1)+"exit 9\n", time.Minute, true)
	ideID, _ := expectPermission(t, f.ide)
	for {
		m := f.ide.next()
		if m["method"] == "$/cancel_request" && m["params"].(map[string]any)["requestId"] == ideID {
			break
		}
	}
	// The broker closes a decision (store, then memory) before it withdraws
	// the hosts' copies: the IDE's $/cancel_request comes after.
	ds, _ := f.broker.Decisions(context.Background(), "s1")
	if len(ds) != 1 || ds[0].Status != store.StatusCancelled || ds[0].Reason != store.ReasonAgentExited {
		t.Fatalf("decision not cancelled with agent_exited: %+v", ds)
	}
}

// TestThreeHostsFirstValidAnswerWins: the IDE, a second JSON-RPC host
// attached to the session and the HTTP API are all shown the request; the
// second host's answer wins; the other copies are withdrawn and the API
// sees the decision answered by it.
func TestThreeHostsFirstValidAnswerWins(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+permRequest(1)+"recv\n", time.Minute, true)
	ideID, params := expectPermission(t, f.ide)
	did := params["_meta"].(map[string]any)["acpmux"].(map[string]any)["decisionId"]
	second := f.add("second", false, 0)
	second.send(`{"jsonrpc":"2.0","id":"att","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"pending_only"}}`)
	if m := second.next(); m["id"] != "att" || m["result"] == nil {
		t.Fatalf("attach: %v", m)
	}
	sid, sparams := expectPermission(t, second)
	if sparams["_meta"].(map[string]any)["acpmux"].(map[string]any)["decisionId"] != did {
		t.Fatalf("second host shown another decision: %v", sparams)
	}
	second.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, sid, selectedReject))
	if got := f.waitAgent(1); got != selectedReject {
		t.Errorf("agent got %s", got)
	}
	for {
		m := f.ide.next()
		if m["method"] == "$/cancel_request" && m["params"].(map[string]any)["requestId"] == ideID {
			break
		}
	}
	code, body := f.http("GET", fmt.Sprintf("/v1/sessions/s1/decisions/%v", did), "")
	if code != 200 || body["status"] != "answered" || body["resolvedBy"] != "second" {
		t.Errorf("API view: %d %v", code, body)
	}
}

// TestTwoAnswersAtTheSameInstant: 1,000 permission requests, each answered
// at the same instant by the IDE (allow) and the HTTP API (reject): exactly
// one answer reaches the agent each time, and it is the one the API was told
// won (200) or lost (409).
func TestTwoAnswersAtTheSameInstant(t *testing.T) {
	trials := 1000
	if testing.Short() {
		trials = 100
	}
	var script strings.Builder
	script.WriteString(permScriptHead)
	for i := range trials {
		script.WriteString(permRequest(i))
		script.WriteString("recv\n")
	}
	f := newBrokerFixture(t, script.String(), time.Minute, true)
	apiWon := make([]bool, trials)
	for i := range trials {
		id, params := expectPermission(t, f.ide)
		did := params["_meta"].(map[string]any)["acpmux"].(map[string]any)["decisionId"].(string)
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, id, selectedAllow))
		}()
		var code int
		go func() {
			defer wg.Done()
			<-start
			code, _ = f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"optionId":"reject"}`)
		}()
		close(start)
		wg.Wait()
		if code != 200 && code != 409 {
			t.Fatalf("trial %d: API answer got %d", i, code)
		}
		apiWon[i] = code == 200
		got := f.waitAgent(i)
		want := selectedAllow
		if apiWon[i] {
			want = selectedReject
		}
		if got != want {
			t.Fatalf("trial %d: agent got %s, want %s (API status %d)", i, got, want, code)
		}
	}
	got := f.agentGot()
	wins := 0
	for i := range trials {
		if got[fmt.Sprintf("perm-%d", i)] == "DUPLICATE" {
			t.Errorf("trial %d: the agent got two responses", i)
		}
		if apiWon[i] {
			wins++
		}
	}
	t.Logf("%d trials: the API won %d, the IDE %d", trials, wins, trials-wins)
}

// TestDuplicateKeysInPermissionRequestRefused: a permission request whose
// params hold a duplicate member (here a second _meta.acpmux that would
// make hosts display a forged command) is refused with -32602 and shown to
// no host.
func TestDuplicateKeysInPermissionRequestRefused(t *testing.T) {
	dup := `send {"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"rm -rf ~/work","kind":"execute","rawInput":{"command":"rm -rf ~/work"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}],"_meta":{"acpmux":{"command":"rm -rf ~/work"},"acpmux":{"command":"git status","warnings":[]}}}}` + "\n"
	f := newBrokerFixture(t, permScriptHead+dup+"recv\nwaiteof\n", time.Minute, true)
	got := f.waitAgent(1)
	if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "duplicate member") {
		t.Errorf("agent got %s, want -32602 naming the duplicate", got)
	}
	f.ide.send(`{"jsonrpc":"2.0","method":"_test/marker","params":{}}`)
	f.waitAgentLog("_test/marker")
	select {
	case m := <-f.ide.in:
		if strings.Contains(m, "request_permission") {
			t.Errorf("the IDE was shown the request: %s", m)
		}
	default:
	}
}

// TestHiddenCharactersWarningReachesIDE: a command with a bidi override is
// presented to the IDE with a warning naming it, in _meta.acpmux.warnings
// and as the first text block of the tool call's content.
func TestHiddenCharactersWarningReachesIDE(t *testing.T) {
	req := `send {"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"Run a command","kind":"execute","rawInput":{"command":"cat \u202egnp.txt"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}` + "\n"
	f := newBrokerFixture(t, permScriptHead+req+"recv\nwaiteof\n", time.Minute, true)
	_, params := expectPermission(t, f.ide)
	want := gate.WarningHiddenInCommand + "U+202E RIGHT-TO-LEFT OVERRIDE"
	meta := params["_meta"].(map[string]any)["acpmux"].(map[string]any)
	var found bool
	for _, w := range meta["warnings"].([]any) {
		found = found || w == want
	}
	if !found {
		t.Errorf("_meta.acpmux.warnings %v lacks %q", meta["warnings"], want)
	}
	content, _ := params["toolCall"].(map[string]any)["content"].([]any)
	var text []string
	for _, c := range content {
		if inner, ok := c.(map[string]any)["content"].(map[string]any); ok {
			text = append(text, fmt.Sprint(inner["text"]))
		}
	}
	if !slices.Contains(text, "⚠ "+want) {
		t.Errorf("tool call content %q lacks the warning block %q", text, "⚠ "+want)
	}
	if code, body := f.http("POST", "/v1/sessions/s1/decisions/"+meta["decisionId"].(string), `{"optionId":"reject"}`); code != 200 {
		t.Fatalf("POST answer: %d %v", code, body)
	}
}

// A permission request for a session that no host created or attached to
// is answered with its reject option at once; no host (not even the IDE)
// is shown it and the broker opens no decision.
func TestPermissionRequestForUnknownSessionIsRejectedUnshown(t *testing.T) {
	ghost := strings.Replace(permRequest(1), `"sessionId":"s1"`, `"sessionId":"ghost"`, 1)
	f := newBrokerFixture(t, permScriptHead+ghost+"recv\n"+permRequest(2)+"recv\n", time.Minute, false)
	if got := f.waitAgent(1); got != selectedReject {
		t.Errorf("agent got %s for the unknown session, want %s", got, selectedReject)
	}
	_, p := expectPermission(t, f.ide)
	if p["sessionId"] != "s1" {
		t.Errorf("the IDE was shown a request of session %v", p["sessionId"])
	}
	if f.broker.HasSession("ghost") {
		t.Error("the broker opened state for the unknown session")
	}
	f.broker.CancelSession("s1", "")
}
