package bridge

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// captureConn hands a copy of every message it is asked to write to got.
type captureConn struct {
	got  chan string
	done chan struct{}
}

func (c captureConn) ReadMessage() ([]byte, error) { <-c.done; return nil, io.EOF }
func (c captureConn) WriteMessages(msgs [][]byte) error {
	for _, m := range msgs {
		c.got <- string(m)
	}
	return nil
}
func (c captureConn) Close() error { return nil }

// TestAgentRequestsDoNotKeepLentLines: a line of the agent that is not a
// session/update notification does not go to the hosts' queues as a lent
// line; the bridge copies it, so whatever keeps it after the reader's next
// read (the goroutine that asks the broker about a permission request, a
// request forwarded to its host) reads its own copy while the block is
// written again. The block is written over right after each line, as a
// reuse would; under -race a kept line is also a reported race.
func TestAgentRequestsDoNotKeepLentLines(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	br, err := confirm.NewBroker(confirm.Options{DefaultTimeout: time.Minute, Logger: log, Breaker: confirm.Breaker{Consecutive: -1, WindowMax: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	brDone := make(chan struct{})
	go func() { defer close(brDone); br.Run(ctx) }()
	agent := &Agent{exited: make(chan struct{})}
	b := New(agent, Options{Broker: br, Logger: log})
	conn := captureConn{got: make(chan string, 16), done: make(chan struct{})}
	h := NewHost("ide", conn, HostOptions{Blocking: true})
	b.mu.Lock()
	b.primary = h
	b.hosts = []*Host{h}
	b.addSessionLocked("s1", "/tmp", h)
	b.mu.Unlock()
	wdone := make(chan struct{})
	go func() { defer close(wdone); h.writeLoop() }()
	t.Cleanup(func() {
		cancel()
		<-brDone
		close(agent.exited) // the permission goroutine's answer has no agent to go to
		b.permWG.Wait()
		h.disconnect(errBridgeClosed)
		close(conn.done)
		<-wdone
	})

	lend := func(line string) {
		t.Helper()
		blk := blockPool.Get().(*lineBlock)
		blk.refs.Store(1)
		n := copy(blk.buf, line)
		b.line = blk
		b.fromAgent(blk.buf[:n])
		b.line = nil
		b.flushPending()
		if r := blk.refs.Load(); r != 1 {
			t.Fatalf("%.60s...: the block is held %d times after the line was routed, want only by the reader", line, r)
		}
		for i := range blk.buf[:n] {
			blk.buf[i] = 'X' // the reader's next read into a reused block
		}
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case s := <-conn.got:
			var m map[string]any
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				t.Fatalf("host got %.200q: %v", s, err)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("timed out waiting for the host")
		}
		return nil
	}

	lend(`{"jsonrpc":"2.0","id":"perm-1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"rm -rf build","kind":"execute","rawInput":{"command":"rm -rf build"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}`)
	m := next()
	tc, _ := json.Marshal(m["params"].(map[string]any)["toolCall"])
	if m["method"] != "session/request_permission" || string(tc) != `{"kind":"execute","rawInput":{"command":"rm -rf build"},"title":"rm -rf build","toolCallId":"c1"}` {
		t.Fatalf("host shown %v", m)
	}

	lend(`{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/tmp/notes.txt"}}`)
	m = next()
	if m["method"] != "fs/read_text_file" || !strings.HasSuffix(m["params"].(map[string]any)["path"].(string), "notes.txt") {
		t.Fatalf("host got %v", m)
	}
}
