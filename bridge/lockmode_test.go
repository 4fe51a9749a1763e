package bridge_test

import (
	"testing"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/gate"
)

// TestLockedPlanModeKeepsTheAgentInPlan: with the gate locked in plan mode
// (--mode plan --lock-mode), a host's mode selection that would take the
// agent out of its plan mode is answered with -32094 and never reaches the
// agent; selecting the plan mode itself still goes through.
func TestLockedPlanModeKeepsTheAgentInPlan(t *testing.T) {
	script := permScriptHead +
		"recv session/set_mode\n" + `send {"jsonrpc":"2.0","id":$ID,"result":{}}` + "\n" +
		"recv session/set_config_option\n" + `send {"jsonrpc":"2.0","id":$ID,"result":{"configOptions":[]}}` + "\n" +
		"waiteof\n"
	f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan, LockMode: true})
	f.prompt()
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":9,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"default"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"mode","value":"acceptEdits"}}`,
	} {
		f.ide.send(req)
		m := nextWithID(t, f, 9)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32094) {
			t.Fatalf("leaving a locked plan mode: got %v, want error -32094", m)
		}
	}
	f.ide.send(`{"jsonrpc":"2.0","id":10,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}`)
	if m := nextWithID(t, f, 10); m["result"] == nil {
		t.Fatalf("selecting plan mode: got %v, want the agent's result", m)
	}
	f.ide.send(`{"jsonrpc":"2.0","id":11,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"model","value":"fast"}}`)
	if m := nextWithID(t, f, 11); m["result"] == nil {
		t.Fatalf("another config option: got %v, want the agent's result", m)
	}
	if m, _ := f.broker.GateMode("s1"); m != gate.ModePlan {
		t.Errorf("gate mode %s, want plan", m)
	}
}

// nextWithID returns the IDE's next message with JSON-RPC id id, skipping
// notifications.
func nextWithID(t *testing.T, f *brokerFixture, id float64) map[string]any {
	t.Helper()
	for {
		m := f.ide.next()
		if m["id"] == id {
			return m
		}
	}
}

// TestModeSelectionWithDuplicateMembersIsInvalidParams: a session/set_mode
// or session/set_config_option whose params carry a member twice (at any
// depth, or in another letter case) is answered with -32602 and never
// reaches the agent: acpmux reads the first duplicate, the agent may read
// the last, so {"modeId":"plan","modeId":"default"} would leave a locked
// plan mode.
func TestModeSelectionWithDuplicateMembersIsInvalidParams(t *testing.T) {
	script := permScriptHead +
		"recv session/set_mode\n" + `send {"jsonrpc":"2.0","id":$ID,"result":{}}` + "\n" +
		"waiteof\n"
	f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan, LockMode: true})
	f.prompt()
	for _, params := range []string{
		`"session/set_mode","params":{"sessionId":"s1","modeId":"plan","modeId":"default"}`,
		`"session/set_mode","params":{"sessionId":"s1","modeId":"plan","MODEID":"default"}`,
		`"session/set_mode","params":{"sessionId":"s1","MODEID":"default"}`,
		`"session/set_mode","params":{"sessionId":"s1","sessionId":"s2","modeId":"plan"}`,
		`"session/set_mode","params":{"sessionId":"s1","modeId":"plan","_meta":{"x":1,"x":2}}`,
		`"session/set_config_option","params":{"sessionId":"s1","configId":"mode","value":"plan","value":"default"}`,
		`"session/set_config_option","params":{"sessionId":"s1","configId":"model","configId":"mode","value":"default"}`,
		`"session/set_config_option","params":{"sessionId":"s1","configId":"mode","value":"plan","VALUE":"default"}`,
		`"session/set_config_option","params":{"sessionId":"s1","configID":"mode","value":"default"}`,
	} {
		f.ide.send(`{"jsonrpc":"2.0","id":9,"method":` + params + `}`)
		m := nextWithID(t, f, 9)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) {
			t.Fatalf("%s: got %v, want error -32602", params, m)
		}
	}
	f.ide.send(`{"jsonrpc":"2.0","id":10,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}`)
	if m := nextWithID(t, f, 10); m["result"] == nil {
		t.Fatalf("a plain plan selection: got %v, want the agent's result", m)
	}
	if m, _ := f.broker.GateMode("s1"); m != gate.ModePlan {
		t.Errorf("gate mode %s, want plan", m)
	}
}

// TestLockedPlanModeRefusesModeConfigOptionsInAnyCaseOrCategory: the mode
// config option is recognised by its id in any letter case ("Mode") and by
// its category "mode" (ACP "Session Config Options"), so neither can take
// the agent out of a locked plan mode.
func TestLockedPlanModeRefusesModeConfigOptionsInAnyCaseOrCategory(t *testing.T) {
	script := `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1","configOptions":[{"id":"agent_mode","name":"Mode","category":"mode","type":"select","currentValue":"plan","options":[{"value":"plan","name":"Plan"},{"value":"default","name":"Default"}]}]}}
recv session/prompt
recv session/set_config_option
send {"jsonrpc":"2.0","id":$ID,"result":{"configOptions":[]}}
waiteof
`
	f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan, LockMode: true})
	f.prompt()
	for _, params := range []string{
		`{"sessionId":"s1","configId":"Mode","value":"default"}`,
		`{"sessionId":"s1","configId":"MODE","value":"default"}`,
		`{"sessionId":"s1","configId":"agent_mode","value":"default"}`,
	} {
		f.ide.send(`{"jsonrpc":"2.0","id":9,"method":"session/set_config_option","params":` + params + `}`)
		m := nextWithID(t, f, 9)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32094) {
			t.Fatalf("%s: got %v, want error -32094", params, m)
		}
	}
	f.ide.send(`{"jsonrpc":"2.0","id":10,"method":"session/set_config_option","params":{"sessionId":"s1","configId":"agent_mode","value":"plan"}}`)
	if m := nextWithID(t, f, 10); m["result"] == nil {
		t.Fatalf("selecting plan: got %v, want the agent's result", m)
	}
}

// TestLockedPlanModeRefusesSwitchModeWithoutAsking: the agent's
// session/request_permission of kind switch_mode, while --lock-mode keeps
// the gate in plan mode, is answered at once with the reject option and
// gate.ModeLockedMessage; no host is asked, so no approval (from a host or
// the decisions API) can let the agent leave plan mode.
func TestLockedPlanModeRefusesSwitchModeWithoutAsking(t *testing.T) {
	script := permScriptHead +
		`send {"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"exit","title":"Ready to code?","kind":"switch_mode"},"options":[{"optionId":"default","name":"Yes, and auto-accept edits","kind":"allow_always"},{"optionId":"plan","name":"No, keep planning","kind":"reject_once"}]}}` + "\n" +
		"recv\n" +
		"recv session/set_mode\n" + `send {"jsonrpc":"2.0","id":$ID,"result":{}}` + "\n" +
		"waiteof\n"
	f := newPlanFixture(t, script, confirm.Options{Mode: gate.ModePlan, LockMode: true}, true)
	f.prompt()
	if opt, msg := agentOutcome(t, f.waitAgent(1)); opt != "plan" || msg != gate.ModeLockedMessage {
		t.Errorf("switch_mode under --lock-mode: agent got %s %q, want plan (reject) %q", opt, msg, gate.ModeLockedMessage)
	}
	f.ide.send(`{"jsonrpc":"2.0","id":12,"method":"session/set_mode","params":{"sessionId":"s1","modeId":"plan"}}`)
	for {
		m := f.ide.next()
		if m["method"] == "session/request_permission" {
			t.Fatalf("a host was asked to approve switch_mode under --lock-mode: %v", m)
		}
		if m["id"] == float64(12) {
			break
		}
	}
	if m, _ := f.broker.GateMode("s1"); m != gate.ModePlan {
		t.Errorf("gate mode %s, want plan", m)
	}
}
