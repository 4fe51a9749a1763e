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
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
)

// TestAttachJoinsRunningRelay: "acpmux attach URL" turns its stdio into one
// more host of a running "acpmux run --listen": its initialize is answered
// from the cache, it joins the IDE's session with session/attach, is shown
// the pending permission request, and its answer reaches the agent.
func TestAttachJoinsRunningRelay(t *testing.T) {
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	r := startRelayProcessEnv(t, permAgentScript, []string{acptest.EnvLog + "=" + agentLog}, "--state", ":memory:")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`)
	r.waitFor(t, "session/request_permission")

	tokenFile := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(tokenFile, []byte(r.token), 0o600)
	cmd := exec.Command("acpmux", "attach", "--token-file", tokenFile, strings.Replace(r.apiURL, "http://", "ws://", 1)+"/acp")
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewScanner(outPipe)
	next := func() map[string]any {
		t.Helper()
		if !out.Scan() {
			t.Fatalf("attach stdout ended: %v", out.Err())
		}
		var m map[string]any
		json.Unmarshal(out.Bytes(), &m)
		return m
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":"a1","method":"initialize","params":{"protocolVersion":1}}`+"\n")
	if m := next(); m["id"] != "a1" || m["result"] == nil {
		t.Fatalf("initialize through attach: %v", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":"a2","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"full"}}`+"\n")
	var perm map[string]any
	sawPrompt := false
	for perm == nil {
		m := next()
		switch m["method"] {
		case "session/update":
			if u := m["params"].(map[string]any)["update"].(map[string]any); u["sessionUpdate"] == "user_message_chunk" {
				sawPrompt = true
			}
		case "session/request_permission":
			perm = m
		}
	}
	if !sawPrompt {
		t.Error("the replay did not carry the IDE's prompt")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": perm["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}})
	io.WriteString(in, string(b)+"\n")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(agentLog)
		if strings.Contains(string(data), `"id":"p1","result":{"outcome":{"outcome":"selected","optionId":"allow"}}`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answer through acpmux attach did not reach the agent:\n%s", data)
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("acpmux attach exit: %v", err)
	}
}
