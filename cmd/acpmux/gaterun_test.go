package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
)

// gateRun is "acpmux run" started as a subprocess (the binary under test)
// with the scripted fake agent; the test is the IDE on its stdin and
// stdout. Every line acpmux writes to stderr arrives on stderr; every
// message the agent reads is appended to agentLog.
type gateRun struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out      chan map[string]any // messages to the IDE, closed at EOF
	stderr   chan string         // closed at EOF
	agentLog string
	wg       sync.WaitGroup // the two readers
}

// startGateRun starts "acpmux run --state :memory: FLAGS -- fake-agent"
// with script as the agent's script. The process is stopped at cleanup.
func startGateRun(t *testing.T, script string, flags ...string) *gateRun {
	t.Helper()
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "agent.script")
	if err := os.WriteFile(scriptFile, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &gateRun{agentLog: filepath.Join(dir, "agent.log"), out: make(chan map[string]any, 256), stderr: make(chan string, 256)}
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"run", "--state", ":memory:", "--grace", "200ms"}, flags...), "--", self)
	r.cmd = exec.Command("acpmux", args...)
	r.cmd.Dir = dir // the agent's working directory: nothing it runs lands in the repository
	r.cmd.Env = append(os.Environ(), acptest.EnvScript+"=@"+scriptFile, acptest.EnvLog+"="+r.agentLog)
	r.cmd.WaitDelay = 5 * time.Second
	r.stdin, _ = r.cmd.StdinPipe()
	stdout, _ := r.cmd.StdoutPipe()
	stderr, _ := r.cmd.StderrPipe()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.wg.Go(func() {
		defer close(r.out)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				r.out <- m
			}
		}
	})
	r.wg.Go(func() {
		defer close(r.stderr)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case r.stderr <- sc.Text():
			default: // nobody is waiting for that much: drop it
			}
		}
	})
	t.Cleanup(func() {
		r.stdin.Close() // the IDE leaves: acpmux stops the agent and exits
		done := make(chan struct{})
		go func() {
			for range r.out {
			}
			for range r.stderr {
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			r.cmd.Process.Kill()
			<-done
		}
		r.wg.Wait()
		r.cmd.Wait()
	})
	return r
}

// send writes one line to acpmux's stdin.
func (r *gateRun) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next returns the next message to the IDE.
func (r *gateRun) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-r.out:
		if !ok {
			t.Fatal("acpmux closed its stdout")
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no message to the IDE")
	}
	return nil
}

// waitStderr returns the first line on acpmux's stderr containing sub.
func (r *gateRun) waitStderr(t *testing.T, sub string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-r.stderr:
			if !ok {
				t.Fatalf("acpmux closed stderr before logging %q", sub)
			}
			if strings.Contains(line, sub) {
				return line
			}
		case <-timeout:
			t.Fatalf("acpmux logged no %q", sub)
		}
	}
}

// startSession sends initialize and session/new and reads their responses.
func (r *gateRun) startSession(t *testing.T) {
	t.Helper()
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	r.next(t)
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.next(t)
}

// promptTurn sends session/prompt (id 3) and returns the permission
// requests the IDE was shown before the prompt's response; the IDE answers
// each with its reject_once option, the answer least likely to run anything.
func (r *gateRun) promptTurn(t *testing.T) (asked []map[string]any) {
	t.Helper()
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	for {
		m := r.next(t)
		if m["method"] == "session/request_permission" {
			asked = append(asked, m)
			idJSON, _ := json.Marshal(m["id"])
			reject := ""
			params, _ := m["params"].(map[string]any)
			opts, _ := params["options"].([]any)
			for _, o := range opts {
				if o, _ := o.(map[string]any); o["kind"] == "reject_once" {
					reject, _ = o["optionId"].(string)
				}
			}
			optJSON, _ := json.Marshal(reject)
			r.send(t, `{"jsonrpc":"2.0","id":`+string(idJSON)+`,"result":{"outcome":{"outcome":"selected","optionId":`+string(optJSON)+`}}}`)
			continue
		}
		if id, ok := m["id"].(float64); ok && id == 3 && m["method"] == nil {
			return asked
		}
	}
}

// agentGot returns the result the agent read for its request id (a JSON
// string id), decoded, or nil.
func (r *gateRun) agentGot(t *testing.T, id string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(r.agentLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["id"] == id && m["method"] == nil {
			res, _ := m["result"].(map[string]any)
			return res
		}
	}
	return nil
}

// outcomeOf returns the optionId (or "cancelled") and
// _meta.acpmux.decidedBy of a session/request_permission result.
func outcomeOf(res map[string]any) (option, decidedBy string) {
	oc, _ := res["outcome"].(map[string]any)
	option, _ = oc["optionId"].(string)
	if oc["outcome"] == "cancelled" {
		option = "cancelled"
	}
	meta, _ := res["_meta"].(map[string]any)
	am, _ := meta["acpmux"].(map[string]any)
	decidedBy, _ = am["decidedBy"].(string)
	return option, decidedBy
}
