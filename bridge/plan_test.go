package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/classify"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/policy"
)

// shellPerm is a claude-agent-acp shaped permission request (rawInput.command,
// title = command) with id perm-n, offering allow-once, the persistent
// allow-always and reject.
func shellPerm(n int, command string) string {
	cmd, _ := json.Marshal(command)
	return fmt.Sprintf(`send {"jsonrpc":"2.0","id":"perm-%d","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c%d","title":%s,"kind":"execute","status":"pending","rawInput":{"command":%s}},"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"allow-always","name":"Always","kind":"allow_always"},{"optionId":"reject","name":"No","kind":"reject_once"}]}}`+"\n", n, n, cmd, cmd)
}

// newPlanFixture is a bridge with a broker that classifies shell commands and
// starts sessions in opts.Mode; the decisions HTTP API is a second host
// when withAPI is set.
func newPlanFixture(t *testing.T, script string, opts confirm.Options, withAPI ...bool) *brokerFixture {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Logger = log
	opts.Classify = func(cmd string) confirm.Classification {
		v := classify.Command(cmd)
		return confirm.Classification{Class: v.Class.String(), Diverges: v.Diverges}
	}
	if opts.DefaultTimeout == 0 {
		opts.DefaultTimeout = time.Minute
	}
	br, err := confirm.NewBroker(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	brDone := make(chan struct{})
	go func() { defer close(brDone); br.Run(ctx) }()
	f := &brokerFixture{t: t, broker: br, token: "test-token"}
	var extra []confirm.Presenter
	if len(withAPI) > 0 && withAPI[0] {
		f.api = httptest.NewUnstartedServer(nil)
		f.api.Config.Handler = httpapi.New(br, httpapi.Options{Addr: f.api.Listener.Addr().String(), Token: f.token, Logger: log})
		f.api.Start()
		t.Cleanup(f.api.Close)
		extra = append(extra, httpapi.Presenter{})
	}
	f.bridge, f.add, f.agentLog = startBridge(t, script, bridge.Options{Broker: br, Presenters: extra, Logger: log})
	t.Cleanup(func() { cancel(); <-brDone })
	f.ide = f.add("ide", true, 0)
	f.ide.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	f.ide.next()
	f.ide.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	f.ide.next()
	return f
}

func (f *brokerFixture) prompt() {
	f.ide.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
}

// agentMeta decodes the agent's result for perm-n: the optionId (or
// "cancelled") and _meta.acpmux.message.
func agentOutcome(t *testing.T, raw string) (option, message string) {
	t.Helper()
	var r struct {
		Outcome struct{ Outcome, OptionID string }
		Meta    struct {
			Acpmux struct{ Message, DecidedBy string }
		} `json:"_meta"`
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("agent result %s: %v", raw, err)
	}
	if r.Outcome.Outcome != "selected" {
		return r.Outcome.Outcome, r.Meta.Acpmux.Message
	}
	return r.Outcome.OptionID, r.Meta.Acpmux.Message
}

// TestPlanModeValidation is the manual validation of plan mode
// (docs/plan-mode.md) against a scripted agent: git status runs with no prompt; touch
// changed.txt is blocked with no prompt and is never presented; python3
// -c 'print(1)' offers only one-time approval and reject (the warning first)
// and asks again next time; an answer choosing the unoffered persistent
// option fails closed.
func TestPlanModeValidation(t *testing.T) {
	script := permScriptHead + shellPerm(1, "git status") + "recv\n" + shellPerm(2, "touch changed.txt") + "recv\n" +
		shellPerm(3, "python3 -c 'print(1)'") + "recv\n" + shellPerm(4, "python3 -c 'print(1)'") + "recv\n" +
		`send {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}` + "\nwaiteof\n"
	f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan})
	f.prompt()

	if opt, msg := agentOutcome(t, f.waitAgent(1)); opt != "allow-once" || msg != gate.ReadOnlyAllowMessage {
		t.Errorf("git status: agent got %s %q, want allow-once with the read-only message", opt, msg)
	}
	if opt, msg := agentOutcome(t, f.waitAgent(2)); opt != "reject" || msg != gate.WriteBlockMessage {
		t.Errorf("touch changed.txt: agent got %s %q, want reject with the write-block message", opt, msg)
	}

	for n := 3; n <= 4; n++ {
		id, params := expectPermission(t, f.ide)
		tc := params["toolCall"].(map[string]any)
		if tc["title"] != "python3 -c 'print(1)'" {
			t.Fatalf("presented %v, want the python3 command (touch and git status must never be presented)", tc["title"])
		}
		var ids []string
		for _, o := range params["options"].([]any) {
			ids = append(ids, o.(map[string]any)["optionId"].(string))
		}
		if strings.Join(ids, ",") != "allow-once,reject" {
			t.Errorf("prompt %d offers %v, want only allow-once and reject", n, ids)
		}
		first := tc["content"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"].(string)
		if !strings.Contains(first, gate.UnknownWarning) {
			t.Errorf("first content block %q, want the seed-001 warning", first)
		}
		meta := params["_meta"].(map[string]any)["acpmux"].(map[string]any)
		if w := meta["warnings"].([]any); len(w) == 0 || w[0] != gate.UnknownWarning || meta["oneOff"] != true {
			t.Errorf("_meta.acpmux = %v, want the warning first and oneOff", meta)
		}
		answer := "allow-once"
		if n == 4 {
			answer = "allow-always" // shown to nobody: must fail closed
		}
		idJSON, _ := json.Marshal(id)
		f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":%q}}}`, idJSON, answer))
		opt, _ := agentOutcome(t, f.waitAgent(n))
		want := map[int]string{3: "allow-once", 4: "reject"}[n]
		if opt != want {
			t.Errorf("perm-%d: agent got %s, want %s", n, opt, want)
		}
	}
	items, err := f.broker.PlanItems(context.Background(), "s1", 0)
	if err != nil || len(items) != 4 {
		t.Fatalf("plan items %d, %v; want 4", len(items), err)
	}
	wantBy := []string{gate.BuiltinPlanReadOnly, gate.BuiltinPlanBlock, "host:ide", "acpmux:no_eligible_host"}
	for i, it := range items {
		if it.DecidedBy != wantBy[i] {
			t.Errorf("item %d (%s) decidedBy %q, want %q", i, it.Command, it.DecidedBy, wantBy[i])
		}
	}
}

// TestPlanModePendingChangeCancels: changing the gate mode, or the tool
// call's arguments, while a one-off prompt is pending cancels it without
// running: the agent gets the reject option and the stale message, and a
// late approval conflicts.
func TestPlanModePendingChangeCancels(t *testing.T) {
	script := permScriptHead + shellPerm(1, "python3 -c 'print(1)'") + "recv\nrecv\n" +
		`send {"jsonrpc":"2.0","id":$ID,"result":{}}` + "\n" +
		"recv session/set_mode\n" + `send {"jsonrpc":"2.0","id":$ID,"result":{}}` + "\n" +
		shellPerm(2, "python3 -c 'print(2)'") + "sleep 300ms\n" +
		`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c2","rawInput":{"command":"python3 -c 'print(3)'"}}}}` + "\n" +
		"recv\nwaiteof\n"
	f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan})
	f.prompt()
	id, _ := expectPermission(t, f.ide)
	f.ide.send(`{"jsonrpc":"2.0","id":9,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"default"}}`)
	if opt, msg := agentOutcome(t, f.waitAgent(1)); opt != "reject" || msg != gate.StaleApprovalMessage {
		t.Errorf("mode change: agent got %s %q, want reject with the stale message", opt, msg)
	}
	idJSON, _ := json.Marshal(id)
	f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}`, idJSON))
	if m, rev := f.broker.GateMode("s1"); m != gate.ModeDefault || rev != 1 {
		t.Errorf("gate %s revision %d, want default 1", m, rev)
	}
	// Back in plan mode (a host act), then the arguments change.
	f.ide.send(`{"jsonrpc":"2.0","id":10,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}`)
	readUpTo(f.ide)
	if m, _ := f.broker.GateMode("s1"); m != gate.ModePlan {
		t.Fatalf("after the host's set_mode plan: gate %s", m)
	}
	if opt, msg := agentOutcome(t, f.waitAgent(2)); opt != "reject" || msg != gate.StaleApprovalMessage {
		t.Errorf("arguments change: agent got %s %q, want reject with the stale message", opt, msg)
	}
	if got := f.agentGot()["perm-1"]; strings.Contains(got, "allow-once") {
		t.Errorf("the late approval reached the agent: %s", got)
	}
}

// TestAgentCannotLeavePlanMode: the agent's current_mode_update engages the
// gate but never leaves it; a human's approval of switch_mode does.
func TestAgentCannotLeavePlanMode(t *testing.T) {
	script := permScriptHead +
		`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}}` + "\n" +
		`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","currentModeId":"default"}}}` + "\n" +
		shellPerm(1, "touch x") + "recv\n" +
		`send {"jsonrpc":"2.0","id":"perm-2","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"exit","title":"Ready to code?","kind":"switch_mode"},"options":[{"optionId":"default","name":"Yes, and manually approve edits","kind":"allow_always"},{"optionId":"plan","name":"No, keep planning","kind":"reject_once"}]}}` + "\n" +
		"recv\n" + shellPerm(3, "touch x") + "recv\nwaiteof\n"
	f := newPlanFixture(t, script, confirm.Options{})
	f.prompt()
	if opt, msg := agentOutcome(t, f.waitAgent(1)); opt != "reject" || msg != gate.WriteBlockMessage {
		t.Errorf("after the agent left plan on its own: got %s %q, want the plan block", opt, msg)
	}
	id, params := expectPermission(t, f.ide)
	if len(params["options"].([]any)) != 2 {
		t.Errorf("switch_mode options %v, want both offered", params["options"])
	}
	idJSON, _ := json.Marshal(id)
	f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"default"}}}`, idJSON))
	if opt, _ := agentOutcome(t, f.waitAgent(2)); opt != "default" {
		t.Errorf("switch_mode: agent got %s", opt)
	}
	id, _ = expectPermission(t, f.ide)
	if m, _ := f.broker.GateMode("s1"); m != gate.ModeDefault {
		t.Errorf("gate %s after a human approved switch_mode, want default", m)
	}
	idJSON, _ = json.Marshal(id)
	f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}`, idJSON))
	if opt, _ := agentOutcome(t, f.waitAgent(3)); opt != "allow-once" {
		t.Errorf("touch in default mode: agent got %s", opt)
	}
}

// TestScopeAndPlanItemsOverHTTP: the API's scope field (ALWAYS refused
// with always_unavailable without a durable store, SESSION remembered) and
// GET /v1/sessions/{sessionId}/plan-items.
func TestScopeAndPlanItemsOverHTTP(t *testing.T) {
	script := permScriptHead + shellPerm(1, "make test") + "recv\n" + shellPerm(2, "make test") + "recv\nwaiteof\n"
	f := newPlanFixture(t, script, confirm.Options{}, true)
	f.prompt()
	_, params := expectPermission(t, f.ide)
	did := params["_meta"].(map[string]any)["acpmux"].(map[string]any)["decisionId"].(string)
	code, body := f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"optionId":"allow-once","scope":"ALWAYS"}`)
	if code != 400 || body["error"].(map[string]any)["code"] != "always_unavailable" {
		t.Fatalf("ALWAYS without a store: %d %v", code, body)
	}
	if code, body := f.http("POST", "/v1/sessions/s1/decisions/"+did, `{"optionId":"allow-once","scope":"SESSION"}`); code != 200 {
		t.Fatalf("SESSION: %d %v", code, body)
	}
	if opt, _ := agentOutcome(t, f.waitAgent(1)); opt != "allow-once" {
		t.Errorf("perm-1: %s", opt)
	}
	if opt, _ := agentOutcome(t, f.waitAgent(2)); opt != "allow-once" {
		t.Errorf("perm-2 (remembered for the session): %s", opt)
	}
	code, body = f.http("GET", "/v1/sessions/s1/plan-items", "")
	items, _ := body["planItems"].([]any)
	if code != 200 || len(items) != 2 {
		t.Fatalf("plan-items: %d %v", code, body)
	}
	first, second := items[0].(map[string]any), items[1].(map[string]any)
	if first["decidedBy"] != "host:http" || first["scope"] != "SESSION" || !strings.HasPrefix(second["decidedBy"].(string), "session:") {
		t.Errorf("plan items %v", items)
	}
	if code, _ := f.http("GET", "/v1/sessions/nope/plan-items", ""); code != 404 {
		t.Errorf("unknown session: %d", code)
	}
}

// TestBreakerCancelsTurn: two consecutive denials (configured) cancel the
// turn: the agent gets session/cancel, the IDE _acpmux/turn_cancelled, and
// the next request of the turn is denied with the breaker message.
func TestBreakerCancelsTurn(t *testing.T) {
	script := permScriptHead + shellPerm(1, "rm a") + "recv\n" + shellPerm(2, "rm b") + "recv\nrecv\n" +
		shellPerm(3, "ls") + "recv\nwaiteof\n"
	pol, _ := policy.Parse([]byte("[[rule]]\nname='no-rm'\ndecision='deny'\ncommand='rm *'\n[[rule]]\nname='ls'\ndecision='allow'\ncommand='ls'"))
	f := newPlanFixture(t, script, confirm.Options{Policy: pol, Breaker: confirm.Breaker{Consecutive: 2, WindowMax: -1}})
	f.prompt()
	for {
		m := f.ide.next()
		if m["method"] == bridge.MethodTurnCancelled {
			if r := m["params"].(map[string]any)["reason"].(string); !strings.Contains(r, "2 consecutive denials") {
				t.Errorf("reason %q", r)
			}
			break
		}
	}
	if opt, msg := agentOutcome(t, f.waitAgent(3)); opt != "reject" || msg != gate.BreakerMessage {
		t.Errorf("after the breaker: %s %q", opt, msg)
	}
}

// TestPlanModeEditWithReadOnlyCommandNeverReachesAHost: through the bridge,
// in plan mode, edit-kind and diff-carrying tool calls whose
// rawInput.command is read-only ("ls") are blocked: the agent gets the
// reject option with the edit-block message and the IDE is never shown
// them (the next thing it sees is the end of the turn).
func TestPlanModeEditWithReadOnlyCommandNeverReachesAHost(t *testing.T) {
	perm := func(n int, kind, extra string) string {
		return fmt.Sprintf(`send {"jsonrpc":"2.0","id":"perm-%d","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c%d","title":"ls","kind":%q,"rawInput":{"command":"ls"}%s},"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"reject","name":"No","kind":"reject_once"}]}}`+"\nrecv\n", n, n, kind, extra)
	}
	diff := `,"content":[{"type":"diff","path":"/tmp/a.go","oldText":"a","newText":"b"}]`
	script := permScriptHead + perm(1, "edit", "") + perm(2, "DELETE", "") + perm(3, "Move", "") + perm(4, "execute", diff) +
		`send {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}` + "\nwaiteof\n"
	pol, err := policy.Parse([]byte("[[rule]]\nname='ro'\ndecision='allow'\nclass='read-only'\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan, Policy: pol})
	f.prompt()
	for n := 1; n <= 4; n++ {
		if opt, msg := agentOutcome(t, f.waitAgent(n)); opt != "reject" || msg != gate.EditBlockMessage {
			t.Errorf("perm-%d: agent got %s %q, want reject with the edit-block message", n, opt, msg)
		}
	}
	for {
		m := f.ide.next()
		if m["method"] == "session/request_permission" {
			t.Fatalf("the IDE was asked: %v", m["params"])
		}
		if fmt.Sprint(m["id"]) == "3" {
			break
		}
	}
}

// readUpTo returns once the bridge has acted on every line h sent before
// it. The bridge reads a host's lines in order on one goroutine and notes
// a mode selection before it forwards the request; an empty JSON-RPC batch
// it answers itself (-32600, id null), so that answer comes after.
func readUpTo(h *testHost) {
	h.t.Helper()
	h.send(`[]`)
	for {
		m := h.next()
		if e, ok := m["error"].(map[string]any); ok && m["id"] == nil && e["code"] == float64(-32600) {
			return
		}
	}
}

// TestEscapedUpdateKindsAreFollowed: a sessionUpdate value spelled with
// escapes is the same value to every host's decoder, and acpmux reads it
// so too: a "tool\u005fcall_update" that changes an open one-off's
// command fails it as stale (the IDE shows the changed command; a late
// approval never reaches the agent), and the agent's own
// "current\u005fmode_update" to plan engages the gate.
func TestEscapedUpdateKindsAreFollowed(t *testing.T) {
	t.Run("tool_call_update", func(t *testing.T) {
		script := permScriptHead + shellPerm(1, "python3 -c 'print(1)'") + "sleep 300ms\n" +
			`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool\u005fcall_update","toolCallId":"c1","rawInput":{"command":"python3 -c 'print(666)'"}}}}` + "\n" +
			"recv\nwaiteof\n"
		f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan})
		f.prompt()
		id, _ := expectPermission(t, f.ide)
		for f.ide.next()["method"] != "session/update" { // the IDE shows the changed command
		}
		idJSON, _ := json.Marshal(id)
		f.ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":{"outcome":"selected","optionId":"allow-once"}}}`, idJSON))
		if opt, msg := agentOutcome(t, f.waitAgent(1)); opt != "reject" || msg != gate.StaleApprovalMessage {
			t.Errorf("agent got %s %q, want reject with the stale message", opt, msg)
		}
	})
	t.Run("current_mode_update", func(t *testing.T) {
		script := permScriptHead +
			`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"current\u005fmode_update","currentModeId":"plan"}}}` + "\n" +
			shellPerm(1, "touch x") + "recv\nwaiteof\n"
		f := newPlanFixture(t, script, confirm.Options{})
		f.prompt()
		if opt, msg := agentOutcome(t, f.waitAgent(1)); opt != "reject" || msg != gate.WriteBlockMessage {
			t.Errorf("agent got %s %q, want the plan block", opt, msg)
		}
	})
}
