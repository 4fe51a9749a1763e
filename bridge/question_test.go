package bridge_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/internal/optional"
)

// questionScript: after the prompt the agent asks one form question with id
// perm-1 (a required integer "count" 1..10 and an optional "color" enum).
const questionScript = permScriptHead +
	`send {"jsonrpc":"2.0","id":"perm-1","method":"elicitation/create","params":{"sessionId":"s1","message":"How many?","mode":"form","requestedSchema":{"type":"object","properties":{"count":{"type":"integer","minimum":1,"maximum":10},"color":{"type":"string","enum":["red","blue"]}},"required":["count"]}}}` + "\n" +
	"recv\nwaiteof\n"

// newQuestionFixture is newBrokerFixture with the IDE's initialize params
// given (its clientCapabilities).
func newQuestionFixture(t *testing.T, script, initParams string) *brokerFixture {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	br, err := confirm.NewBroker(confirm.Options{DefaultTimeout: time.Minute, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	f := &brokerFixture{t: t, broker: br, token: "test-token"}
	f.api = httptest.NewUnstartedServer(nil)
	f.api.Config.Handler = httpapi.New(br, httpapi.Options{Addr: f.api.Listener.Addr().String(), Token: f.token, Logger: log})
	f.api.Start()
	t.Cleanup(f.api.Close)
	f.bridge, f.add, f.agentLog = startBridge(t, script, bridge.Options{Broker: br, Presenters: []confirm.Presenter{httpapi.Presenter{}}, Logger: log})
	f.ide = f.add("ide", true, 0)
	f.ide.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + initParams + `}`)
	f.ide.next()
	f.ide.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	f.ide.next()
	f.ide.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	return f
}

// agentInitialize returns the params of the initialize the agent received.
func (f *brokerFixture) agentInitialize() map[string]any {
	f.t.Helper()
	data, _ := os.ReadFile(f.agentLog)
	for _, line := range strings.Split(string(data), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["method"] == "initialize" {
			return m["params"].(map[string]any)
		}
	}
	f.t.Fatal("the agent got no initialize")
	return nil
}

// TestQuestionAPIAnswersBeforeIDE: the IDE advertised elicitation.form and
// is shown the agent's question; the decisions API lists it as a question,
// refuses an answer that does not match the schema (400 naming the field),
// and its valid answer wins: the agent gets the content acpmux encoded,
// the IDE's copy is withdrawn, and the IDE's late answer changes nothing.
func TestQuestionAPIAnswersBeforeIDE(t *testing.T) {
	f := newQuestionFixture(t, questionScript, `{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":{}}}}`)
	var ideID any
	var did string
	for ideID == nil {
		m := f.ide.next()
		if m["method"] == "elicitation/create" {
			ideID = m["id"]
			p := m["params"].(map[string]any)
			did = p["_meta"].(map[string]any)["acpmux"].(map[string]any)["decisionId"].(string)
			if p["message"] != "How many?" {
				t.Fatalf("IDE shown %v", p)
			}
		}
	}
	caps := f.agentInitialize()["clientCapabilities"].(map[string]any)["elicitation"].(map[string]any)
	if _, ok := caps["form"]; !ok {
		t.Errorf("agent not told of form elicitation: %v", caps)
	}
	if _, ok := caps["url"]; !ok {
		t.Errorf("agent not told of url elicitation (the API serves it): %v", caps)
	}
	code, body := f.http("GET", "/v1/sessions/s1/decisions/"+did, "")
	if code != 200 || body["kind"] != "question" || body["prompt"] != "How many?" || body["status"] != "open" || body["requestedSchema"] == nil {
		t.Fatalf("GET question: %d %v", code, body)
	}
	code, body = f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"action":"accept","content":{"count":3,"color":"green"}}`)
	if msg, _ := body["error"].(map[string]any)["message"].(string); code != 400 || !strings.Contains(msg, "content.color") {
		t.Fatalf("invalid answer: %d %v", code, body)
	}
	code, body = f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"action":"accept","content":{"color":"blue","count":3}}`)
	if code != 200 || body["status"] != "answered" || body["deduped"] != false {
		t.Fatalf("valid answer: %d %v", code, body)
	}
	if got := f.waitAgent(1); got != `{"action":"accept","content":{"color":"blue","count":3}}` {
		t.Errorf("agent got %s", got)
	}
	var cancelled, resolved bool
	for !cancelled || !resolved {
		m := f.ide.next()
		switch m["method"] {
		case "$/cancel_request":
			cancelled = m["params"].(map[string]any)["requestId"] == ideID
		case bridge.MethodPermissionResolved:
			resolved = m["params"].(map[string]any)["decisionId"] == did
		}
	}
	if code, _ := f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"action":"decline"}`); code != 409 {
		t.Errorf("late API answer: %d, want 409", code)
	}
	f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"action":"accept","content":{"count":9}}}`, ideID))
	f.ide.send(`{"jsonrpc":"2.0","method":"_test/marker","params":{}}`)
	f.waitAgentLog("_test/marker")
	if got := f.agentGot()["perm-1"]; got != `{"action":"accept","content":{"color":"blue","count":3}}` {
		t.Errorf("after the IDE's late answer the agent's record is %s", got)
	}
	checkAgainstSDK(t, []string{f.agentGot()["perm-1"]})
}

// TestQuestionNotShownToHostWithoutCapability: an IDE that did not
// advertise elicitation is not sent the question; the API answers it
// (decline) and the agent gets exactly {"action":"decline"}.
func TestQuestionNotShownToHostWithoutCapability(t *testing.T) {
	f := newQuestionFixture(t, questionScript, `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}`)
	var did string
	for deadline := time.Now().Add(10 * time.Second); did == ""; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the question never reached the API")
		}
		_, body := f.http("GET", "/v1/sessions/s1/decisions?status=open", "")
		if ds, _ := body["decisions"].([]any); len(ds) == 1 {
			did = ds[0].(map[string]any)["id"].(string)
		}
	}
	caps := f.agentInitialize()["clientCapabilities"].(map[string]any)
	if caps["fs"] == nil || caps["elicitation"] == nil {
		t.Errorf("agent's clientCapabilities %v: want fs kept and elicitation added", caps)
	}
	if code, body := f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"action":"decline"}`); code != 200 {
		t.Fatalf("decline: %d %v", code, body)
	}
	if got := f.waitAgent(1); got != `{"action":"decline"}` {
		t.Errorf("agent got %s", got)
	}
	select {
	case line := <-f.ide.in:
		if strings.Contains(line, "elicitation/create") {
			t.Fatalf("IDE without the capability was sent %s", line)
		}
	default:
	}
	checkAgainstSDK(t, []string{f.agentGot()["perm-1"]})
}

// checkAgainstSDK parses each result the agent received with the
// TypeScript SDK's zCreateElicitationResponse (@agentclientprotocol/sdk
// 1.9.0 under $ACPMUX_NPM_DIR; skipped without it) and wants the same
// value back.
func checkAgainstSDK(t *testing.T, results []string) {
	t.Helper()
	dir := os.Getenv("ACPMUX_NPM_DIR")
	mod := filepath.Join(dir, "node_modules/@agentclientprotocol/sdk/dist/schema/zod.gen.js")
	if _, err := os.Stat(mod); err != nil || dir == "" {
		optional.Skip(t, "npm SDK", "set ACPMUX_NPM_DIR to a directory with npm install @agentclientprotocol/sdk@1.9.0")
	}
	if _, err := exec.LookPath("node"); err != nil {
		optional.Skip(t, "npm SDK", "no node on PATH")
	}
	q, _ := json.Marshal("file://" + mod)
	script := filepath.Join(t.TempDir(), "check.mjs")
	os.WriteFile(script, []byte(`import { zCreateElicitationResponse } from `+string(q)+`;
import { readFileSync } from "node:fs";
for (const line of readFileSync(0, "utf8").split("\n").filter(Boolean)) {
  const r = zCreateElicitationResponse.safeParse(JSON.parse(line));
  console.log(r.success ? JSON.stringify(r.data) : "ERR");
}
`), 0o600)
	cmd := exec.Command("node", script)
	cmd.Stdin = strings.NewReader(strings.Join(results, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, r := range results {
		var x, y any
		if i >= len(got) || json.Unmarshal([]byte(got[i]), &x) != nil || json.Unmarshal([]byte(r), &y) != nil {
			t.Fatalf("SDK refuses %s (node printed %q)", r, out)
		}
		xa, _ := json.Marshal(x)
		ya, _ := json.Marshal(y)
		if string(xa) != string(ya) {
			t.Errorf("SDK reads %s as %s", r, got[i])
		}
	}
}

// TestQuestionShownToHostsThatAttachLater: a question already open when
// hosts attach (a phone opening the page later) is sent as
// elicitation/create to the one that advertised elicitation.form, and to
// the one that did not, nothing (never as a session/request_permission);
// the late host's answer wins.
func TestQuestionShownToHostsThatAttachLater(t *testing.T) {
	f := newQuestionFixture(t, questionScript, `{"protocolVersion":1,"clientCapabilities":{}}`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the question never reached the API")
		}
		_, body := f.http("GET", "/v1/sessions/s1/decisions?status=open", "")
		if ds, _ := body["decisions"].([]any); len(ds) == 1 {
			break
		}
	}
	plain := f.add("plain", false, 0)
	plain.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	plain.next()
	plain.send(`{"jsonrpc":"2.0","id":2,"method":"session/attach","params":{"sessionId":"s1","historyPolicy":"pending_only"}}`)
	if m := plain.next(); m["result"] == nil {
		t.Fatalf("attach: %v", m)
	}
	form := f.add("form", false, 0)
	form.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"elicitation":{"form":{}}}}}`)
	form.next()
	form.send(`{"jsonrpc":"2.0","id":2,"method":"session/attach","params":{"sessionId":"s1","historyPolicy":"pending_only"}}`)
	var q map[string]any
	for q == nil {
		switch m := form.next(); m["method"] {
		case "elicitation/create":
			q = m
		case "session/request_permission":
			t.Fatalf("the question was sent as a permission request: %v", m)
		}
	}
	if p := q["params"].(map[string]any); p["message"] != "How many?" || p["_meta"].(map[string]any)["acpmux"].(map[string]any)["decisionId"] == nil {
		t.Fatalf("late host shown %v", p)
	}
	qid, _ := json.Marshal(q["id"])
	form.send(`{"jsonrpc":"2.0","id":` + string(qid) + `,"result":{"action":"accept","content":{"count":2}}}`)
	if got := f.waitAgent(1); got != `{"action":"accept","content":{"count":2}}` {
		t.Errorf("agent got %s", got)
	}
	for {
		select {
		case line := <-plain.in:
			if strings.Contains(line, "elicitation/create") || strings.Contains(line, "session/request_permission") {
				t.Fatalf("the host without the capability was sent %s", line)
			}
			continue
		default:
		}
		break
	}
}
