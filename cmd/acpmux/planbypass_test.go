package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// planBypassCase is one shell command an agent asks to run in plan mode.
// MARKER in command is replaced by the absolute path of a file in a
// temporary directory that the command would create if it ran.
type planBypassCase struct {
	name    string
	command string
}

// planBypassCases are write programs, including the bypass families of
// issue 9 (where mvdan.cc/sh's parse differs from bash's: see
// docs/classify.md, "Where the parser and bash may disagree"), which the
// plan gate must never let run, nor show to a host.
var planBypassCases = []planBypassCase{
	{name: "plain write", command: "touch MARKER"},
	{name: "write after read", command: "ls; touch MARKER"},
	{name: "redirection", command: "echo x > MARKER"},
	{name: "write after a heredoc", command: "cat <<EOF\nfoo\nEOF\ntouch MARKER"},
	{name: "comment ending in backslash", command: "ls # x \\\ntouch MARKER"},
	{name: "bare comment ending in backslash", command: "ls #\\\ntouch MARKER"},
	{name: "comment ending in backslash after a continuation", command: "ls \\\n#\\\ntouch MARKER"},
	{name: "comment ending in backslash in bash -c", command: "bash -c 'ls # x \\\ntouch MARKER'"},
	{name: "heredoc delimiter joined by backslash-newline", command: "cat <<EOF\nfoo\nEO\\\nF\ntouch MARKER\nEOF"},
	{name: "tab-stripped heredoc delimiter joined by backslash-newline", command: "cat <<-EOF\n\tfoo\nE\\\nOF\ntouch MARKER\nEOF"},
	{name: "partly quoted heredoc delimiter", command: "cat <<'_'X1\n\\\n_X1\n_\\\nX1\ntouch MARKER\n_X1"},
	{name: "heredoc in a pipeline", command: "cat <<-END-OF | cat\n\\\nEND-OF\ntouch MARKER\n\tEND-OF"},
	{name: "carriage return", command: "ls\rtouch MARKER"},
}

// TestPlanModeNeverRunsWrites drives "acpmux run --mode plan" (and with
// --lock-mode) with a scripted agent that asks permission for an execute
// tool call with each command and, as a real agent would, runs it with
// bash (in a fresh temporary directory) when it gets an allow option.
// For every command no host is asked, the agent gets the reject option,
// and the marker file the command would write never appears.
func TestPlanModeNeverRunsWrites(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the plan-mode write test needs it to run what the gate allows")
	}
	for _, tc := range planBypassCases {
		for _, flags := range [][]string{{"--mode", "plan"}, {"--mode", "plan", "--lock-mode"}} {
			t.Run(tc.name+"/"+strings.Join(flags, " "), func(t *testing.T) {
				if failures := runPlanCommand(t, bash, tc.command, flags...); len(failures) > 0 {
					t.Errorf("%q: %s", tc.command, strings.Join(failures, "; "))
				}
			})
		}
	}
}

// TestPlanCommandDriverRunsAllowedCommands checks the driver itself: a
// write that a policy rule allows (outside plan mode) is run by the
// scripted agent and creates the marker, so an absent marker in
// TestPlanModeNeverRunsWrites means the command was not run.
func TestPlanCommandDriverRunsAllowedCommands(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	p := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(p, []byte("[[rule]]\nname = 'touch'\ndecision = 'allow'\nclass = 'write'\ncommand = 'touch *'\n"), 0o600)
	failures := runPlanCommand(t, bash, "touch MARKER", "--mode", "default", "--policy", p)
	if want := []string{"agent got allow, want reject", "the marker was written"}; strings.Join(failures, "; ") != strings.Join(want, "; ") {
		t.Errorf("failures %q, want %q (the driver must see an allowed write happen)", failures, want)
	}
}

// runPlanCommand runs one prompt turn of "acpmux run FLAGS" in which the
// agent asks to run command (MARKER replaced) and runs it with bash when
// allowed; it returns what went against the plan gate: a host asked, an
// outcome other than the reject option, the marker written.
func runPlanCommand(t *testing.T, bash, command string, flags ...string) (failures []string) {
	t.Helper()
	work := t.TempDir()
	marker := filepath.Join(work, "marker")
	command = strings.ReplaceAll(command, "MARKER", "'"+marker+"'")
	cmdJSON, _ := json.Marshal(command)
	argv, _ := json.Marshal([]string{"env", "-i", "HOME=" + work, "TMPDIR=" + work, "PATH=" + os.Getenv("PATH"),
		"sh", "-c", `cd "$HOME" && exec "$@"`, "sh", bash, "--noprofile", "--norc", "-c", command})
	script := `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":` + string(cmdJSON) + `,"kind":"execute","status":"pending","rawInput":{"command":` + string(cmdJSON) + `}},"options":[{"optionId":"allow","name":"Yes","kind":"allow_once"},{"optionId":"allow-always","name":"Always","kind":"allow_always"},{"optionId":"reject","name":"No","kind":"reject_once"}]}}
recv
runif allow ` + string(argv) + `
runif allow-always ` + string(argv) + `
send {"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}
waiteof
`
	r := startGateRun(t, script, flags...)
	r.startSession(t)
	if asked := r.promptTurn(t); len(asked) > 0 {
		failures = append(failures, "a host was asked")
	}
	if opt, by := outcomeOf(r.agentGot(t, "perm-1")); opt != "reject" {
		failures = append(failures, "agent got "+opt+", want reject")
		t.Logf("%q: agent got %s (decidedBy %s)", command, opt, by)
	}
	if _, err := os.Stat(marker); err == nil {
		failures = append(failures, "the marker was written")
	}
	return failures
}
