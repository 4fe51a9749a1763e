package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp/acptest"
)

const planAgentHead = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"plan","name":"Plan"}]}}}
`

const planAgentTurn = `
recv session/prompt
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
waiteof
`

// planAgentScript expects acpmux to select its plan mode right after
// session/new (the agent fails with status 99 on any other request).
const planAgentScript = planAgentHead + `
recv session/set_mode
send {"jsonrpc":"2.0","id":$ID,"result":{}}
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}}
` + planAgentTurn

// runPlanTurn drives one prompt turn as the IDE, advertising notices or
// not, and returns every message the IDE got after session/new.
func runPlanTurn(t *testing.T, r *runningRelay, notices bool) []map[string]any {
	t.Helper()
	caps := `{}`
	if notices {
		caps = `{"session":{"notices":{}}}`
	}
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":`+caps+`}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	var got []map[string]any
	for r.out.Scan() {
		var m map[string]any
		json.Unmarshal(r.out.Bytes(), &m)
		got = append(got, m)
		if m["method"] == nil && m["id"] == 3.0 {
			return got
		}
		if m["method"] == nil {
			t.Fatalf("a response the IDE did not ask for: %s", r.out.Bytes())
		}
		if m["method"] == "session/request_permission" {
			t.Fatalf("the IDE was asked: %s", r.out.Bytes())
		}
	}
	t.Fatalf("stdout closed before the prompt turn's response; got %v", got)
	return nil
}

// byMethod returns the params of the messages with method.
func byMethod(msgs []map[string]any, method string) []map[string]any {
	var ps []map[string]any
	for _, m := range msgs {
		if m["method"] == method {
			ps = append(ps, m["params"].(map[string]any))
		}
	}
	return ps
}

// TestPlanModeSetsAgentModeAndTellsHosts: with --mode plan and an agent
// that offers a "plan" mode, acpmux sends session/set_mode {modeId:"plan"}
// itself (its response reaches no host); a write the gate blocks reaches
// the IDE as _acpmux/blocked (command, class, rule, message) and, as the IDE
// advertised clientCapabilities.session.notices, as a session/update
// notice; the IDE is never asked.
func TestPlanModeSetsAgentModeAndTellsHosts(t *testing.T) {
	log := filepath.Join(t.TempDir(), "agent.log")
	r := startRelayProcessEnv(t, planAgentScript, []string{acptest.EnvLog + "=" + log}, "--state", ":memory:", "--mode", "plan")
	got := runPlanTurn(t, r, true)
	agentIn, _ := os.ReadFile(log)
	if !strings.Contains(string(agentIn), `"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}`) {
		t.Errorf("the agent did not get session/set_mode plan; it read:\n%s", agentIn)
		for len(r.logLines) > 0 {
			t.Log(<-r.logLines)
		}
	}
	blocked := byMethod(got, "_acpmux/blocked")
	if len(blocked) != 1 {
		t.Fatalf("_acpmux/blocked: %v, want one", blocked)
	}
	b := blocked[0]
	if b["sessionId"] != "s1" || b["command"] != "touch x" || b["class"] != "write" || b["route"] != "plan_block" || b["mode"] != "plan" ||
		b["rule"] == "" || b["rule"] == nil || b["message"] == "" || b["message"] == nil || b["toolCallId"] != "c1" {
		t.Errorf("_acpmux/blocked params %v", b)
	}
	var notice map[string]any
	var modeUpdate bool
	for _, p := range byMethod(got, "session/update") {
		u := p["update"].(map[string]any)
		switch u["sessionUpdate"] {
		case "notice":
			notice = u
		case "current_mode_update":
			modeUpdate = u["currentModeId"] == "plan"
		}
	}
	if notice == nil || notice["severity"] != "warning" || !strings.Contains(notice["title"].(string), "plan mode") || !strings.Contains(notice["description"].(string), "touch x") {
		t.Errorf("notice %v", notice)
	}
	if !modeUpdate {
		t.Error("the IDE did not see the agent's current_mode_update to plan")
	}
}

// TestNoAgentPlanModeAndNoNotices: --no-agent-plan-mode sends the agent no
// session/set_mode (the script fails on any request but session/prompt), and
// a host that did not advertise notices gets only _acpmux/blocked.
func TestNoAgentPlanModeAndNoNotices(t *testing.T) {
	r := startRelayProcess(t, planAgentHead+planAgentTurn, "--state", ":memory:", "--mode", "plan", "--no-agent-plan-mode")
	got := runPlanTurn(t, r, false)
	if len(byMethod(got, "_acpmux/blocked")) != 1 {
		t.Errorf("_acpmux/blocked: %v, want one", byMethod(got, "_acpmux/blocked"))
	}
	for _, p := range byMethod(got, "session/update") {
		if p["update"].(map[string]any)["sessionUpdate"] == "notice" {
			t.Errorf("a notice for a host that did not advertise notices: %v", p)
		}
	}
}

// TestPolicyDenyTellsHosts: a policy deny is also reported with
// _acpmux/blocked, route deny and the rule's name.
func TestPolicyDenyTellsHosts(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(pol, []byte("[[rule]]\nname = \"no-touch\"\ndecision = \"deny\"\ncommand = \"touch *\"\n"), 0o600)
	r := startRelayProcess(t, planAgentHead+planAgentTurn, "--state", ":memory:", "--policy", pol)
	got := runPlanTurn(t, r, false)
	bl := byMethod(got, "_acpmux/blocked")
	if len(bl) != 1 || bl[0]["route"] != "deny" || !strings.Contains(bl[0]["rule"].(string), "no-touch") {
		t.Errorf("_acpmux/blocked: %v, want one with route deny and rule no-touch", bl)
	}
}
