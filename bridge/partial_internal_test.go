package bridge

import (
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// chunkUpdate returns an agent_message_chunk notification of session s1
// with text (inserted as is: escape it yourself).
func chunkUpdate(text string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`
}

// pipeAgent returns an agent whose stdout is the read end of a pipe the
// test writes to (w).
func pipeAgent(t *testing.T) (agent *Agent, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return &Agent{exited: make(chan struct{}), conn: newRecyclingConn(r, io.Discard, r, 0)}, w
}

// readToOneHost runs agent's reader on a bridge whose one host, an IDE
// that hands what it is written to conn.got, is in session s1. stop (also
// a cleanup) waits for the reader to end (the agent's stdout closed), lets
// the host write what is queued and waits for its writer.
func readToOneHost(t *testing.T, agent *Agent) (conn captureConn, stop func()) {
	b := New(agent, Options{Logger: slog.New(slog.DiscardHandler)})
	conn = captureConn{got: make(chan string, 16), done: make(chan struct{})}
	h := NewHost("ide", conn, HostOptions{Blocking: true})
	b.mu.Lock()
	b.primary = h
	b.hosts = []*Host{h}
	b.addSessionLocked("s1", "/tmp", h)
	b.mu.Unlock()
	wdone, rdone := make(chan struct{}), make(chan struct{})
	go func() { defer close(wdone); h.writeLoop() }()
	go func() { defer close(rdone); b.readAgent() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			<-rdone
			h.finish()
			<-wdone
			close(conn.done)
		})
	}
	t.Cleanup(stop)
	return conn, stop
}

// nextLine returns the next message conn's host was written, failing with
// missing if none comes.
func nextLine(t *testing.T, conn captureConn, missing string) string {
	t.Helper()
	select {
	case got := <-conn.got:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal(missing)
	}
	return ""
}

// TestWholeLinesAreNotHeldBackByALineStillArriving: the agent writes a
// session/update notification and, in the same write, the first bytes of
// a long line it then takes its time to finish. The host gets the whole
// notification at once: the reader hands over what is pending before it
// waits for the rest of the line, not after.
func TestWholeLinesAreNotHeldBackByALineStillArriving(t *testing.T) {
	agent, w := pipeAgent(t)
	conn, _ := readToOneHost(t, agent)
	t.Cleanup(func() { w.Close() }) // before readToOneHost's stop

	update := chunkUpdate("hello")
	next := chunkUpdate(strings.Repeat("x", 100))
	cut := len(next) / 2
	if _, err := io.WriteString(w, update+"\n"+next[:cut]); err != nil {
		t.Fatal(err)
	}
	if got := nextLine(t, conn, "the whole line waited for the line after it"); got != update {
		t.Fatalf("host got %q, want %q", got, update)
	}
	if _, err := io.WriteString(w, next[cut:]+"\n"); err != nil {
		t.Fatal(err)
	}
	if got := nextLine(t, conn, "the second line never reached the host"); got != next {
		t.Fatalf("host got %q, want the second line %q", got, next)
	}
}

// TestLinesBeforeATooLongLineReachTheHost: the agent writes two whole
// session/update notifications and then, in the same write, a line over
// --max-line-bytes. The host gets both notifications before the bridge
// stops the agent for the long line.
func TestLinesBeforeATooLongLineReachTheHost(t *testing.T) {
	out := chunkUpdate("ok1") + "\n" + chunkUpdate("ok2") + "\n" + chunkUpdate(strings.Repeat("x", 5000)) + "\n"
	agent, err := StartAgent(AgentOptions{Argv: []string{"sh", "-c", `printf '%s' "$0"; exec sleep 30`, out}, MaxLineBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Signal(syscall.SIGKILL); agent.wait() })
	conn, _ := readToOneHost(t, agent)
	for _, want := range []string{chunkUpdate("ok1"), chunkUpdate("ok2")} {
		if got := nextLine(t, conn, "the host never got "+want[:60]+"...: lost with the too-long line after it"); got != want {
			t.Fatalf("host got %.100q, want %.100q", got, want)
		}
	}
}

// TestLineNotValidUTF8IsNotForwarded: a notification of the agent with
// bytes that are not UTF-8 in a string is not forwarded (a WebSocket host
// must close on such a text frame); the next line is.
func TestLineNotValidUTF8IsNotForwarded(t *testing.T) {
	agent, w := pipeAgent(t)
	conn, stop := readToOneHost(t, agent)
	for _, bad := range []string{"bad\xff\xfe", "overlong \xc0\xaf", "surrogate \xed\xa0\x80", "cut \xe2\x82"} {
		if _, err := io.WriteString(w, chunkUpdate(bad)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(w, chunkUpdate("good é")+"\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	stop()
	close(conn.got)
	var got []string
	for m := range conn.got {
		got = append(got, m)
	}
	if len(got) != 1 || got[0] != chunkUpdate("good é") {
		t.Fatalf("host got %q, want only the valid line", got)
	}
}
