package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPolicyFlagMalformedAtStart: a malformed --policy file is a clear
// error before anything starts.
func TestPolicyFlagMalformedAtStart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(p, []byte("[[rule]]\nname = 'x'\ndecision = 'perhaps'\n"), 0o600)
	f := gateFlags{mode: "plan", policy: p, breakerWindow: time.Minute}
	_, err := f.load([]string{"/usr/bin/agent"})
	if err == nil || !strings.Contains(err.Error(), "--policy") || !strings.Contains(err.Error(), "perhaps") {
		t.Fatalf("err = %v", err)
	}
	if _, err := (&gateFlags{mode: "yolo", breakerWindow: time.Minute}).load(nil); err == nil {
		t.Error("--mode yolo accepted")
	}
}

// emptyMatcherPolicy is a policy whose second rule, "allow-all" at line 5,
// has key = []: today's reading would make it match (and allow) anything.
func emptyMatcherPolicy(key string) string {
	return "[[rule]]\nname = 'no-cat'\ndecision = 'deny'\ncommand = 'cat *'\n[[rule]]\nname = 'allow-all'\ndecision = 'allow'\n" + key + " = []\n"
}

var policyMatcherKeys = []string{"command", "kind", "path", "title", "agent", "class", "mode"}

// TestRunRefusesEmptyArrayMatcherAtStart: "acpmux run --policy" with an
// empty array in any matcher exits 2 before starting the agent, naming the
// rule, its line and the key.
func TestRunRefusesEmptyArrayMatcherAtStart(t *testing.T) {
	for _, key := range policyMatcherKeys {
		t.Run(key, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "policy.toml")
			os.WriteFile(p, []byte(emptyMatcherPolicy(key)), 0o600)
			marker := filepath.Join(dir, "agent-started")
			cmd := exec.Command("acpmux", "run", "--state", ":memory:", "--policy", p, "--", "sh", "-c", "touch "+marker)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit: %v, want status 2; stderr:\n%s", err, stderr.String())
			}
			for _, want := range []string{"--policy", `rule 2 ("allow-all", line 5)`, key + " = []"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q, want it to name %q", stderr.String(), want)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the agent was started")
			}
		})
	}
}

// TestSIGHUPKeepsRulesOnEmptyArrayMatcher: a running "acpmux run" that
// gets SIGHUP after the policy file gained an empty-array matcher (each
// key in turn) logs why and keeps the old rules: the agent's "cat x" is
// still denied by rule:no-cat and no "allow-all" rule approves anything.
func TestSIGHUPKeepsRulesOnEmptyArrayMatcher(t *testing.T) {
	p := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(p, []byte("[[rule]]\nname = 'no-cat'\ndecision = 'deny'\ncommand = 'cat *'\n"), 0o600)
	script := `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"cat x","kind":"execute","rawInput":{"command":"cat x"}},"options":[{"optionId":"allow","name":"Yes","kind":"allow_once"},{"optionId":"reject","name":"No","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
waiteof
`
	r := startGateRun(t, script, "--policy", p)
	r.startSession(t)
	for _, key := range policyMatcherKeys {
		os.WriteFile(p, []byte(emptyMatcherPolicy(key)), 0o600)
		r.cmd.Process.Signal(syscall.SIGHUP)
		line := r.waitStderr(t, "keeping the old rules")
		for _, want := range []string{"allow-all", "line 5", key + " = []"} {
			if !strings.Contains(line, want) {
				t.Errorf("%s: log %q, want it to name %q", key, line, want)
			}
		}
	}
	if asked := r.promptTurn(t); len(asked) != 0 {
		t.Errorf("the IDE was asked %d times, want none (rule:no-cat denies)", len(asked))
	}
	if opt, by := outcomeOf(r.agentGot(t, "perm-1")); opt != "reject" || by != "rule:no-cat" {
		t.Errorf("agent got %s decided by %q, want reject by rule:no-cat (the old rules)", opt, by)
	}
}
