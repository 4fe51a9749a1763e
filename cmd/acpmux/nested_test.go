package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp/acptest"
)

// nestedAgentScript asks permission for a write with an id and a _meta
// member of its own, and reports the answer in an update.
const nestedAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"perm-7","method":"session/request_permission","params":{"sessionId":"s1","_meta":{"vendor":{"trace":"t-1"}},"toolCall":{"toolCallId":"c1","title":"rm -rf build","kind":"execute","rawInput":{"command":"rm -rf build"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
waiteof
`

// nestedRun starts "acpmux run FLAGS -- acpmux run INNER -- AGENT" (a
// bridge whose agent is itself acpmux run) and returns its stdin and
// stdout.
func nestedRun(t *testing.T, script, agentLog string, outer, inner []string) (io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	args := append(append([]string{"run", "--state", ":memory:"}, outer...), "--", "acpmux", "run", "--state", ":memory:")
	args = append(append(args, inner...), "--", os.Args[0])
	cmd := exec.Command("acpmux", args...)
	cmd.Env = append(os.Environ(), acptest.EnvScript+"="+script, acptest.EnvLog+"="+agentLog)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(outPipe)
	out.Buffer(make([]byte, 1<<20), 1<<24)
	send := func(l string) { io.WriteString(in, l+"\n") }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	return in, out
}

// TestNestedBridgeKeepsWarningsOnceAndMeta: behind two acpmux, the IDE
// sees the agent's permission request once, each warning once (in
// _meta.acpmux.warnings and as one text block), the agent's own _meta
// member untouched; its answer reaches the agent under the agent's own id.
func TestNestedBridgeKeepsWarningsOnceAndMeta(t *testing.T) {
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	in, out := nestedRun(t, nestedAgentScript, agentLog, nil, nil)
	var perm map[string]any
	for out.Scan() {
		var m map[string]any
		json.Unmarshal(out.Bytes(), &m)
		if m["method"] == "session/request_permission" {
			perm = m
			break
		}
	}
	if perm == nil {
		t.Fatal("the IDE never saw the permission request")
	}
	params := perm["params"].(map[string]any)
	meta := params["_meta"].(map[string]any)
	if v, _ := json.Marshal(meta["vendor"]); string(v) != `{"trace":"t-1"}` {
		t.Errorf("the agent's _meta.vendor became %s", v)
	}
	warnings := meta["acpmux"].(map[string]any)["warnings"].([]any)
	seen := map[string]int{}
	for _, w := range warnings {
		seen[w.(string)]++
	}
	content, _ := params["toolCall"].(map[string]any)["content"].([]any)
	blocks := map[string]int{}
	for _, c := range content {
		if inner, ok := c.(map[string]any)["content"].(map[string]any); ok {
			blocks[inner["text"].(string)]++
		}
	}
	if len(warnings) == 0 {
		t.Fatal("no warnings for rm -rf build")
	}
	for w, n := range seen {
		if n != 1 || blocks["⚠ "+w] != 1 {
			t.Errorf("warning %q: %d times in _meta, %d text blocks; want 1 and 1", w, n, blocks["⚠ "+w])
		}
	}
	if len(blocks) != len(seen) {
		t.Errorf("text blocks %v, want one per warning %v", blocks, seen)
	}
	// Answer reject with the IDE's own id of the request.
	id, _ := json.Marshal(perm["id"])
	io.WriteString(in, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`+"\n")
	for out.Scan() {
		var m map[string]any
		json.Unmarshal(out.Bytes(), &m)
		if m["id"] == float64(3) {
			break
		}
	}
	log, _ := os.ReadFile(agentLog)
	if !strings.Contains(string(log), `"id":"perm-7","result":{"outcome":{"outcome":"selected","optionId":"reject"}}`) {
		t.Errorf("the agent did not get the reject under its own id perm-7:\n%s", log)
	}
}

// TestNestedBridgeInnerGateDecidesFirst: with plan mode on the inner
// acpmux only, the write is blocked there; the outer bridge and the IDE
// never see a permission request.
func TestNestedBridgeInnerGateDecidesFirst(t *testing.T) {
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	_, out := nestedRun(t, nestedAgentScript, agentLog, nil, []string{"--mode", "plan", "--lock-mode"})
	for out.Scan() {
		line := out.Text()
		if strings.Contains(line, `"session/request_permission"`) {
			t.Fatalf("the IDE was asked: %s", line)
		}
		var m map[string]any
		json.Unmarshal(out.Bytes(), &m)
		if m["id"] == float64(3) {
			break
		}
	}
	log, _ := os.ReadFile(agentLog)
	if !strings.Contains(string(log), `"id":"perm-7","result":{"outcome":{"outcome":"selected","optionId":"reject"}`) {
		t.Errorf("the inner gate did not reject the write:\n%s", log)
	}
}
