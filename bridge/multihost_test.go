package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/bridge"
)

// testHost is one in-memory host connected to a bridge.
type testHost struct {
	t    *testing.T
	w    *io.PipeWriter
	in   chan string
	host *bridge.Host
}

func (h *testHost) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.w, line+"\n"); err != nil {
		h.t.Fatalf("host write: %v", err)
	}
}

// next returns the next message the host received.
func (h *testHost) next() map[string]any {
	h.t.Helper()
	select {
	case line, ok := <-h.in:
		if !ok {
			h.t.Fatal("host connection closed")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			h.t.Fatalf("host got non-JSON %q", line)
		}
		return m
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		h.t.Fatalf("timed out waiting for a host message (host %s gone: %v)\n%s", h.host.ID, h.host.Err(), buf[:runtime.Stack(buf, true)])
	}
	return nil
}

// startBridge starts the fake agent with script behind a bridge and returns
// a function that connects hosts. The bridge runs until the agent exits or
// the test ends.
// A host added with queue < 0 never reads what it is sent (a stalled host)
// and has a queue of -queue messages.
// The fake agent appends what it reads to the file agentLog names.
func startBridge(t *testing.T, script string, opts bridge.Options) (b *bridge.Bridge, add func(id string, blocking bool, queue int) *testHost, agentLog string) {
	t.Helper()
	dir := t.TempDir()
	agentLog = filepath.Join(dir, "agent.ndjson")
	scriptFile := filepath.Join(dir, "agent.script")
	if err := os.WriteFile(scriptFile, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	agent, err := bridge.StartAgent(bridge.AgentOptions{
		Argv: []string{os.Args[0]}, Env: append(os.Environ(), acptest.EnvScript+"=@"+scriptFile, acptest.EnvLog+"="+agentLog), Stderr: os.Stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	opts.GracePeriod = 200 * time.Millisecond
	b = bridge.New(agent, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { cancel(); <-done })
	add = func(id string, blocking bool, queue int) *testHost {
		hr, hw := io.Pipe()
		or, ow := io.Pipe()
		h := &testHost{t: t, w: hw, in: make(chan string, 1<<16)}
		stalled := queue < 0
		if stalled {
			queue = -queue
		}
		h.host = bridge.NewHost(id, bridge.NewNDJSONConn(hr, ow, hr, 0), bridge.HostOptions{Blocking: blocking, QueueLen: queue})
		b.AddHost(h.host)
		go func() {
			if stalled {
				return
			}
			r := bufio.NewReaderSize(or, 1<<20)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					close(h.in)
					return
				}
				h.in <- strings.TrimSuffix(line, "\n")
			}
		}()
		t.Cleanup(func() { ow.Close(); hw.Close() })
		once.Do(func() {
			go func() { defer close(done); b.Run(ctx) }()
		})
		return h
	}
	return b, add, agentLog
}

// TestSecondHostInitializeIsCached: the agent sees one initialize; the
// second host gets the cached result under its own id.
func TestSecondHostInitializeIsCached(t *testing.T) {
	_, add, _ := startBridge(t, `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1,"agentInfo":{"name":"fake"}}}
recv
send {"jsonrpc":"2.0","id":$ID,"error":{"code":-32601,"message":"the agent saw a second $METHOD"}}
`, bridge.Options{})
	a := add("a", true, 0)
	a.send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := a.next(); m["id"] != 7.0 || m["result"] == nil {
		t.Fatalf("host a got %v", m)
	}
	b := add("b", false, 0)
	b.send(`{"jsonrpc":"2.0","id":"b-init","method":"initialize","params":{"protocolVersion":1}}`)
	m := b.next()
	if m["id"] != "b-init" || m["result"].(map[string]any)["agentInfo"].(map[string]any)["name"] != "fake" {
		t.Fatalf("host b got %v, want the cached initialize result", m)
	}
}

// TestHostsUsingTheSameIDs: two hosts with requests of the same id in
// flight at once each get their own response.
func TestHostsUsingTheSameIDs(t *testing.T) {
	_, add, _ := startBridge(t, `
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"method":"$METHOD"}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"method":"$METHOD"}}
`, bridge.Options{})
	a, b := add("a", true, 0), add("b", false, 0)
	a.send(`{"jsonrpc":"2.0","id":7,"method":"_test/a","params":{}}`)
	b.send(`{"jsonrpc":"2.0","id":7,"method":"_test/b","params":{}}`)
	for _, h := range []struct {
		h    *testHost
		want string
	}{{a, "_test/a"}, {b, "_test/b"}} {
		m := h.h.next()
		if m["id"] != 7.0 || m["result"].(map[string]any)["method"] != h.want {
			t.Errorf("host %s got %v, want the response to its own %s", h.h.host.ID, m, h.want)
		}
	}
}

// TestSlowRemoteHostIsDropped: a non-blocking host whose queue is full is
// disconnected with ErrHostTooSlow while the blocking host gets everything.
func TestSlowRemoteHostIsDropped(t *testing.T) {
	var script strings.Builder
	script.WriteString("recv\nsend {\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{}}\n")
	for range 2000 {
		script.WriteString(`send {"jsonrpc":"2.0","method":"_test/tick","params":{}}` + "\n")
	}
	_, add, _ := startBridge(t, script.String(), bridge.Options{})
	ide := add("ide", true, 0)
	slow := add("slow", false, -16) // never reads
	ide.send(`{"jsonrpc":"2.0","id":1,"method":"_test/go","params":{}}`)
	if m := ide.next(); m["id"] != 1.0 {
		t.Fatalf("ide got %v", m)
	}
	for i := range 2000 {
		if m := ide.next(); m["method"] != "_test/tick" {
			t.Fatalf("ide message %d: %v", i, m)
		}
	}
	select {
	case <-slow.host.Done():
		if err := slow.host.Err(); err != bridge.ErrHostTooSlow {
			t.Errorf("slow host dropped with %v, want ErrHostTooSlow", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the slow host was not disconnected")
	}
}
