package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pipedRequests is what `printf '<initialize>\n<session/new>\n' |` sends:
// two requests, then EOF.
const pipedRequests = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}
`

// pipeThroughAcpmux runs "acpmux run ARGS..." with pipedRequests on its
// stdin and returns the responses it printed by id, and its stderr.
func pipeThroughAcpmux(t *testing.T, args ...string) (map[string]map[string]json.RawMessage, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "acpmux", append([]string{"run", "--state", ":memory:"}, args...)...)
	cmd.Stdin = strings.NewReader(pipedRequests)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("acpmux run: %v\n%s", err, stderr.String())
	}
	got := map[string]map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		got[string(m["id"])] = m
	}
	return got, stderr.String()
}

// TestPipedRequestsAnsweredBeforeAgentStdinCloses: the acp-go-sdk example
// agent stops at stdin EOF without finishing the requests it is handling;
// at the IDE's EOF acpmux keeps the agent's stdin open until both piped
// requests have their response, on every run.
func TestPipedRequestsAnsweredBeforeAgentStdinCloses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the SDK example agent")
	}
	agent := buildExample(t, "github.com/coder/acp-go-sdk/example/agent", t.TempDir())
	for i := range 10 {
		got, stderr := pipeThroughAcpmux(t, "--", agent)
		for _, id := range []string{"1", "2"} {
			if m := got[id]; m == nil || m["result"] == nil {
				t.Fatalf("run %d: request %s got %s, want a result\nstderr:\n%s", i, id, m["error"], stderr)
			}
		}
	}
}

// TestAgentStdinClosedAfterGraceWhenUnanswered: an agent that never
// answers gets its stdin closed once --grace has passed after the IDE's
// EOF; it exits at EOF and the IDE gets -32090 for what was unanswered.
func TestAgentStdinClosedAfterGraceWhenUnanswered(t *testing.T) {
	got, stderr := pipeThroughAcpmux(t, "--grace", "200ms", "--", "sh", "-c", "cat >/dev/null; exit 0")
	for _, id := range []string{"1", "2"} {
		if m := got[id]; m == nil || !strings.Contains(string(m["error"]), "-32090") {
			t.Errorf("request %s got %v, want a -32090 error response", id, m)
		}
	}
	if !strings.Contains(stderr, "the agent did not answer the IDE's requests within the grace period; closing its stdin") {
		t.Errorf("stderr lacks the grace-period warning:\n%s", stderr)
	}
}
