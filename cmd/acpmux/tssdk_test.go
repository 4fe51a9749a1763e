package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/internal/optional"
)

// npmDir returns a directory with node_modules holding
// @agentclientprotocol/sdk@1.9.0 and ws ($ACPMUX_NPM_DIR, set by .ci/run),
// or skips. ACPMUX_REQUIRE_NPM=1 turns the skip into a failure.
func npmDir(t *testing.T) string {
	dir := os.Getenv("ACPMUX_NPM_DIR")
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "node_modules/@agentclientprotocol/sdk/dist/examples/ws-client.js")); err == nil {
			if _, err := exec.LookPath("node"); err == nil {
				return dir
			}
		}
	}
	if os.Getenv("ACPMUX_REQUIRE_NPM") == "1" {
		t.Fatalf("ACPMUX_NPM_DIR=%q has no @agentclientprotocol/sdk@1.9.0 examples (npm install @agentclientprotocol/sdk@1.9.0 ws)", dir)
	}
	optional.Skip(t, "npm SDK", "set ACPMUX_NPM_DIR to a directory with npm install @agentclientprotocol/sdk@1.9.0 ws")
	return ""
}

// TestTypeScriptSDKWebSocketClient runs the official TypeScript SDK's
// WebSocket example client (@agentclientprotocol/sdk 1.9.0,
// dist/examples/ws-client.js) against acpmux's /acp, in front of the same
// SDK's example agent: its whole prompt turn, permission request included,
// completes. The client sends the fixed token "example-token".
func TestTypeScriptSDKWebSocketClient(t *testing.T) {
	dir := npmDir(t)
	examples := filepath.Join(dir, "node_modules/@agentclientprotocol/sdk/dist/examples")
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("example-token"), 0o600)
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	// The IDE side stays open and idle: the remote host drives the turn.
	mux := exec.Command("acpmux", "run", "--listen", addr, "--token-file", tokenFile, "--state", ":memory:", "--",
		"node", filepath.Join(examples, "agent.js"))
	ideIn, _ := mux.StdinPipe()
	mux.Stdout = nil
	stderr := &lockedBuilder{}
	mux.Stderr = stderr
	if err := mux.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { ideIn.Close(); mux.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The client's own error for a refused connection can be masked by
	// the one its cleanup throws (closing a stream that never opened), so
	// it starts only once acpmux listens.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("acpmux does not listen on %s: %v\n%s", addr, err, stderr.String())
		}
	}
	var out []byte
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		client := exec.CommandContext(ctx, "node", filepath.Join(examples, "ws-client.js"))
		client.Env = append(os.Environ(), "ACP_WS_URL=ws://"+addr+"/acp")
		out, err = client.CombinedOutput()
		if err == nil || time.Now().After(deadline) || !strings.Contains(string(out), "ECONNREFUSED") {
			break
		}
	}
	if err != nil {
		t.Fatalf("ws-client.js: %v\n%s\nacpmux stderr:\n%s", err, out, stderr.String())
	}
	if !strings.Contains(string(out), "Done: end_turn") {
		t.Errorf("ws-client.js did not finish its turn:\n%s", out)
	}
}

// lockedBuilder is a strings.Builder safe to write from a command's
// output copier while the test reads it.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
