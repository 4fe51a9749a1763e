package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp/acptest"
)

// logAgentScript asks one permission, ends the turn once it is answered,
// and exits with status 3.
const logAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
exit 3
`

// TestLogEventsJSON runs "acpmux run --log-format json --log-file F" with
// a scripted agent and the test as the IDE, and checks that F holds one
// JSON object per line with each event of a session's life at info level
// and its fields: agent started, host attached, session created, decision
// opened and closed (route, who decided, time to answer), host left, agent
// exited (status, signal). stdout carries only ACP and stderr no logs.
func TestLogEventsJSON(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "acpmux.log")
	cmd := exec.Command("acpmux", "run", "--log-format", "json", "--log-file", logFile, "--state", ":memory:", "--", os.Args[0])
	cmd.Env = append(os.Environ(), acptest.EnvScript+"="+logAgentScript)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	out := bufio.NewScanner(stdout)
	next := func(method string, id any) map[string]any {
		t.Helper()
		for out.Scan() {
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("stdout line that is not JSON-RPC: %q", out.Text())
			}
			if (method != "" && m["method"] == method) || (method == "" && m["method"] == nil && m["id"] == id) {
				return m
			}
		}
		t.Fatalf("stdout ended waiting for %q %v", method, id)
		return nil
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	next("", 1.0)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`+"\n")
	next("", 2.0)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`+"\n")
	perm := next("session/request_permission", nil)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": perm["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}})
	io.WriteString(stdin, string(b)+"\n")
	next("", 3.0)
	for out.Scan() { // until the agent's exit closes stdout
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("exit status %d, want the agent's 3", code)
	}
	if strings.Contains(stderr.String(), "level") || strings.Contains(stderr.String(), "msg") {
		t.Errorf("logs on stderr despite --log-file:\n%s", stderr.String())
	}

	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	events := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if msg, _ := m["msg"].(string); events[msg] == nil {
			events[msg] = m
		}
	}
	for _, tt := range []struct {
		msg    string
		fields map[string]any // nil value: the member must be present
	}{
		{"agent started", map[string]any{"pid": nil, "argv": nil}},
		{"host attached", map[string]any{"host": "stdio"}},
		{"session created", map[string]any{"session": "s1", "host": "stdio", "cwd": "/tmp"}},
		{"decision opened", map[string]any{"session": "s1", "route": "ask", "decision": nil, "title": "touch x"}},
		{"decision closed", map[string]any{"session": "s1", "route": "ask", "status": "answered", "by": "stdio", "optionId": "allow", "wait_ms": nil, "delivered_ms": nil}},
		{"host left", map[string]any{"host": "stdio"}},
		{"agent exited", map[string]any{"status": 3.0, "signal": ""}},
	} {
		m := events[tt.msg]
		if m == nil {
			t.Errorf("no %q line in the log:\n%s", tt.msg, data)
			continue
		}
		if m["level"] != "INFO" {
			t.Errorf("%q at level %v, want INFO", tt.msg, m["level"])
		}
		for k, want := range tt.fields {
			got, ok := m[k]
			if !ok || (want != nil && got != want) {
				t.Errorf("%q: %s = %v, want %v (line %v)", tt.msg, k, got, want, m)
			}
		}
	}
	if argv, _ := events["agent started"]["argv"].([]any); len(argv) != 1 || argv[0] != os.Args[0] {
		t.Errorf("agent started: argv %v, want [%s]", events["agent started"]["argv"], os.Args[0])
	}
	if pid, _ := events["agent started"]["pid"].(float64); pid <= 0 {
		t.Errorf("agent started: pid %v", events["agent started"]["pid"])
	}
	if w, ok := events["decision closed"]["wait_ms"].(float64); !ok || w < 0 {
		t.Errorf("decision closed: wait_ms %v, want a number of milliseconds >= 0", events["decision closed"]["wait_ms"])
	}
}

func TestLogFlagErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "--log-format", "xml", "--", "true"}, stdio{strings.NewReader(""), &out, &errb}); code != 2 || !strings.Contains(errb.String(), "want text or json") {
		t.Errorf("--log-format xml: status %d, stderr %q; want 2", code, errb.String())
	}
	errb.Reset()
	if code := Main([]string{"run", "--log-file", filepath.Join(t.TempDir(), "no", "such", "dir"), "--", "true"}, stdio{strings.NewReader(""), &out, &errb}); code != 1 || !strings.Contains(errb.String(), "--log-file") {
		t.Errorf("--log-file in a missing directory: status %d, stderr %q; want 1", code, errb.String())
	}
}
