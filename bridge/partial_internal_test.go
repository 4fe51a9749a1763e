package bridge

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// TestWholeLinesAreNotHeldBackByALineStillArriving: the agent writes a
// session/update notification and, in the same write, the first bytes of
// a long line it then takes its time to finish. The host gets the whole
// notification at once: the reader hands over what is pending before it
// waits for the rest of the line, not after.
func TestWholeLinesAreNotHeldBackByALineStillArriving(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	br, err := confirm.NewBroker(confirm.Options{DefaultTimeout: time.Minute, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	brDone := make(chan struct{})
	go func() { defer close(brDone); br.Run(ctx) }()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	agent := &Agent{exited: make(chan struct{}), conn: newRecyclingConn(r, io.Discard, r, 0)}
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
	rdone := make(chan struct{})
	go func() { defer close(rdone); b.readAgent() }()
	t.Cleanup(func() {
		w.Close()
		<-rdone
		cancel()
		<-brDone
		h.disconnect(errBridgeClosed)
		close(conn.done)
		<-wdone
	})

	update := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}`
	if _, err := io.WriteString(w, update+"\n"+`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-conn.got:
		if got != update {
			t.Fatalf("host got %q, want %q", got, update)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the whole line waited for the line after it")
	}
	rest := strings.Repeat("x", 100) + `"}}}}`
	if _, err := io.WriteString(w, rest+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-conn.got:
		if !strings.HasSuffix(got, rest) {
			t.Fatalf("host got %q, want the second line", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second line never reached the host")
	}
}

// TestLinesBeforeATooLongLineReachTheHost: the agent writes two whole
// session/update notifications and then, in the same write, a line over
// --max-line-bytes. The host gets both notifications before the bridge
// stops the agent for the long line.
func TestLinesBeforeATooLongLineReachTheHost(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	update := func(text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`
	}
	out := update("ok1") + "\n" + update("ok2") + "\n" + update(strings.Repeat("x", 5000)) + "\n"
	agent, err := StartAgent(AgentOptions{Argv: []string{"sh", "-c", `printf '%s' "$0"; exec sleep 30`, out}, MaxLineBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Signal(syscall.SIGKILL); agent.wait() })
	b := New(agent, Options{Logger: log})
	conn := captureConn{got: make(chan string, 16), done: make(chan struct{})}
	h := NewHost("ide", conn, HostOptions{Blocking: true})
	b.mu.Lock()
	b.primary = h
	b.hosts = []*Host{h}
	b.addSessionLocked("s1", "/tmp", h)
	b.mu.Unlock()
	wdone := make(chan struct{})
	go func() { defer close(wdone); h.writeLoop() }()
	rdone := make(chan struct{})
	go func() { defer close(rdone); b.readAgent() }()
	t.Cleanup(func() {
		<-rdone
		h.disconnect(errBridgeClosed)
		close(conn.done)
		<-wdone
	})
	for _, want := range []string{update("ok1"), update("ok2")} {
		select {
		case got := <-conn.got:
			if got != want {
				t.Fatalf("host got %.100q, want %.100q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the host never got %.60q: lost with the too-long line after it", want)
		}
	}
}

// TestLineNotValidUTF8IsNotForwarded: a notification of the agent with
// bytes that are not UTF-8 in a string is not forwarded (a WebSocket host
// must close on such a text frame); the next line is.
func TestLineNotValidUTF8IsNotForwarded(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	update := func(text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	agent := &Agent{exited: make(chan struct{}), conn: newRecyclingConn(r, io.Discard, r, 0)}
	b := New(agent, Options{Logger: log})
	conn := captureConn{got: make(chan string, 16), done: make(chan struct{})}
	h := NewHost("ide", conn, HostOptions{Blocking: true})
	b.mu.Lock()
	b.primary = h
	b.hosts = []*Host{h}
	b.addSessionLocked("s1", "/tmp", h)
	b.mu.Unlock()
	wdone := make(chan struct{})
	go func() { defer close(wdone); h.writeLoop() }()
	rdone := make(chan struct{})
	go func() { defer close(rdone); b.readAgent() }()
	for _, bad := range []string{"bad\xff\xfe", "overlong \xc0\xaf", "surrogate \xed\xa0\x80", "cut \xe2\x82"} {
		if _, err := io.WriteString(w, update(bad)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(w, update("good é")+"\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	<-rdone
	h.finish() // write what is queued, then stop
	<-wdone
	close(conn.done)
	close(conn.got)
	var got []string
	for m := range conn.got {
		got = append(got, m)
	}
	if len(got) != 1 || got[0] != update("good é") {
		t.Fatalf("host got %q, want only the valid line", got)
	}
}
