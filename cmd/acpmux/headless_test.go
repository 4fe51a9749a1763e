package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
)

// headlessAgentScript answers the prompt first, then (as agents whose
// background subagents keep working do) asks permission outside any
// prompt turn, and reads the answer.
const headlessAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
send {"jsonrpc":"2.0","id":"bg1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}
waiteof
`

// startHeadless runs "acpmux run --headless" with the scripted agent,
// opens session s1 and finishes one prompt turn; it returns the relay and
// the agent's log file.
func startHeadless(t *testing.T, flags ...string) (*runningRelay, string) {
	t.Helper()
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	r := startRelayProcessEnv(t, headlessAgentScript, []string{acptest.EnvLog + "=" + agentLog},
		append([]string{"--state", ":memory:", "--headless"}, flags...)...)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	if m := r.waitFor(t, ""); m["id"] != float64(3) {
		t.Fatalf("want the prompt response first, got %v", m)
	}
	return r, agentLog
}

// ideSawUntilDone reads the IDE side until the agent's "done" update and
// reports whether a permission request was among the lines.
func ideSawUntilDone(t *testing.T, r *runningRelay) bool {
	t.Helper()
	asked := false
	for r.out.Scan() {
		line := r.out.Text()
		asked = asked || strings.Contains(line, `"session/request_permission"`)
		if strings.Contains(line, `"text":"done"`) {
			return asked
		}
	}
	t.Fatal("stdout closed before the agent's done update")
	return asked
}

// openDecision waits (bounded) until the API lists an open decision of s1.
func openDecision(t *testing.T, r *runningRelay) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var list struct{ Decisions []struct{ ID, Status string } }
		if r.get(t, "/v1/sessions/s1/decisions?status=open", &list) == 200 && len(list.Decisions) > 0 {
			return list.Decisions[0].ID
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no open decision appeared in the API")
	return ""
}

// TestHeadlessDriverIsNeverAsked: with --headless the IDE drives the agent
// but is never shown a permission request; one that arrives after the
// prompt response (out of turn) waits in the decisions API, is answered
// there, and the answer reaches the agent.
func TestHeadlessDriverIsNeverAsked(t *testing.T) {
	r, agentLog := startHeadless(t)
	did := openDecision(t, r)
	req, _ := http.NewRequest("POST", r.apiURL+"/v1/sessions/s1/decisions/"+did, bytes.NewBufferString(`{"optionId":"allow"}`))
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("answer: %d", resp.StatusCode)
	}
	if ideSawUntilDone(t, r) {
		t.Error("the headless IDE was shown a permission request")
	}
	log, _ := os.ReadFile(agentLog)
	if !strings.Contains(string(log), `"id":"bg1","result":{"outcome":{"outcome":"selected","optionId":"allow"}`) {
		t.Errorf("the agent did not get the API's allow:\n%s", log)
	}
}

// TestHeadlessTimeoutFailsClosed: nobody answers a headless decision; at
// the decision timeout the agent gets the reject option.
func TestHeadlessTimeoutFailsClosed(t *testing.T) {
	r, agentLog := startHeadless(t, "--decision-timeout", "500ms")
	if ideSawUntilDone(t, r) {
		t.Error("the headless IDE was shown a permission request")
	}
	log, _ := os.ReadFile(agentLog)
	var got struct {
		Result struct {
			Outcome struct{ Outcome, OptionID string }
		}
	}
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, `"id":"bg1"`) && strings.Contains(l, `"result"`) {
			json.Unmarshal([]byte(l[strings.Index(l, "{"):]), &got)
		}
	}
	if got.Result.Outcome.OptionID != "reject" {
		t.Errorf("after the timeout the agent got %+v, want the reject option\n%s", got.Result.Outcome, log)
	}
}
