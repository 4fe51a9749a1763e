package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
)

// ghostRequests is how many permission requests the agent sends for
// sessions no host created or attached to.
const ghostRequests = 3000

// ghostAgentScript opens session s1 for the IDE, sends ghostRequests
// permission requests, each for a session of its own that nobody created
// and with a 4 KiB command, reads as many responses, then tells the IDE
// it is done with an update of s1.
func ghostAgentScript() string {
	var b strings.Builder
	b.WriteString("recv initialize\nsend {\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"protocolVersion\":1}}\n")
	b.WriteString("recv session/new\nsend {\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"sessionId\":\"s1\"}}\n")
	cmd := strings.Repeat("x", 4<<10)
	for i := range ghostRequests {
		fmt.Fprintf(&b, `send {"jsonrpc":"2.0","id":"g%d","method":"session/request_permission","params":{"sessionId":"ghost-%d","toolCall":{"toolCallId":"c%d","title":"rm -rf %s","kind":"execute","rawInput":{"command":"rm -rf %s"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}`+"\n", i, i, i, cmd, cmd)
	}
	for range ghostRequests {
		b.WriteString("recv\n")
	}
	b.WriteString(`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}` + "\n")
	b.WriteString("waiteof\n")
	return b.String()
}

// Permission requests for sessions that no host created or attached to
// open no decision: the agent gets the reject option of each at once, and a
// real acpmux run that took 3,000 of them stays under 100 MB of resident
// memory (VmHWM, the peak).
func TestPermissionRequestsForUnknownSessionsStayUnder100MB(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "agent.script")
	if err := os.WriteFile(script, []byte(ghostAgentScript()), 0o600); err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(dir, "agent.ndjson")
	var wrap []string
	if raceEnabled {
		// The acpmux measured is a plain build, as users run it: the
		// race-instrumented test binary's memory is 5-10 times larger and
		// varies with load.
		bin := filepath.Join(dir, "bin")
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "acpmux"), ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		wrap = []string{"env", "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	}
	r := startRelayProcessWrapped(t, wrap, "@"+script, []string{acptest.EnvLog + "=" + agentLog}, "--state", filepath.Join(dir, "state.db"))
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	done := make(chan int)
	go func() {
		shown := 0
		for r.out.Scan() {
			line := r.out.Text()
			if strings.Contains(line, `"session/request_permission"`) {
				shown++
			}
			if strings.Contains(line, `"text":"done"`) {
				break
			}
		}
		done <- shown
	}()
	select {
	case shown := <-done:
		if shown != 0 {
			t.Errorf("the IDE was shown %d permission requests for sessions it does not have", shown)
		}
	case <-time.After(60 * time.Second):
		t.Errorf("the agent did not get its %d answers within a minute", ghostRequests)
	}
	hwm := vmHWM(t, r.cmd.Process.Pid)
	t.Logf("acpmux VmHWM after %d permission requests for unknown sessions: %d MB", ghostRequests, hwm>>20)
	limit := int64(100 << 20)
	if hwm >= limit {
		t.Errorf("VmHWM %d MB, want under %d MB", hwm>>20, limit>>20)
	}
	log, _ := os.ReadFile(agentLog)
	if n := strings.Count(string(log), `"result":{"outcome":{"outcome":"selected","optionId":"reject"}}`); n != ghostRequests {
		t.Errorf("the agent got %d reject answers, want %d", n, ghostRequests)
	}
}

// vmHWM returns the peak resident set size of process pid in bytes, from
// /proc/PID/status; the test is skipped where there is no /proc.
func vmHWM(t *testing.T, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
