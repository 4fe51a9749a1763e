//go:build linux

package bridge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pipeHost returns a host over a pipe of its own (os.Pipe: non-blocking
// mode, so the agent reader may write to it inline) of pipeBytes bytes
// of capacity, and the pipe's read end, the host's side.
func pipeHost(t *testing.T, id string, capBytes int, opts HostOptions) (*Host, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if capBytes > 0 {
		sc, _ := w.SyscallConn()
		sc.Control(func(fd uintptr) { syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, uintptr(capBytes)) })
	}
	hostIn, _, err := os.Pipe() // the host sends nothing
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close(); hostIn.Close() })
	return NewHost(id, NewNDJSONConn(hostIn, w, hostIn, 0), opts), r
}

// runHosts runs agent's reader on a bridge whose hosts, all in session
// s1, are hosts; the returned stop waits for the reader (the agent's
// stdout closed) and lets every host's writer write what is queued.
func runHosts(t *testing.T, agent *Agent, hosts ...*Host) (stop func()) {
	b := New(agent, Options{Logger: slog.New(slog.DiscardHandler)})
	b.mu.Lock()
	b.primary = hosts[0]
	b.hosts = hosts
	b.addSessionLocked("s1", "/tmp", hosts[0])
	b.sessions["s1"].hosts = append(b.sessions["s1"].hosts, hosts[1:]...)
	b.mu.Unlock()
	rdone := make(chan struct{})
	wdone := make([]chan struct{}, len(hosts))
	for i, h := range hosts {
		wdone[i] = make(chan struct{})
		go func() { defer close(wdone[i]); h.writeLoop() }()
	}
	go func() { defer close(rdone); b.readAgent() }()
	return func() {
		<-rdone
		for i, h := range hosts {
			h.finish()
			<-wdone[i]
		}
	}
}

// floodLines returns n distinct chunk notifications, one a line.
func floodLines(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = chunkUpdate(fmt.Sprintf("chunk %d %s", i, strings.Repeat("y", i%300)))
	}
	return lines
}

// TestInlineWritesKeepEveryLineInOrderWhenThePipeFills: a host over a
// pipe far smaller than a burst of the agent's (4 KiB) gets every line whole and in order: the reader writes what the pipe
// takes at once, and the rest of a batch, cut anywhere in a line, is
// written by the host's writer before anything queued after it.
func TestInlineWritesKeepEveryLineInOrderWhenThePipeFills(t *testing.T) {
	agent, aw := pipeAgent(t)
	h, hr := pipeHost(t, "ide", 4096, HostOptions{Blocking: true})
	stop := runHosts(t, agent, h)
	lines := floodLines(5000)
	go func() {
		bw := bufio.NewWriterSize(aw, 1<<16)
		for _, l := range lines {
			bw.WriteString(l + "\n")
		}
		bw.Flush()
		aw.Close()
	}()
	sc := bufio.NewScanner(hr)
	sc.Buffer(nil, 1<<20)
	for i, want := range lines {
		if !sc.Scan() {
			t.Fatalf("line %d: %v", i, sc.Err())
		}
		if got := sc.Text(); got != want {
			t.Fatalf("line %d: got %.80q, want %.80q", i, got, want)
		}
	}
	stop()
	if h.carried.Load() == 0 {
		t.Errorf("no inline write left a rest for the writer (inline %d): the pipe never filled", h.inlined.Load())
	}
}

// TestInlineWritesNeedNoWriterForAFastHost: a host whose pipe has room
// gets the agent's lines written by the agent reader itself, one write
// for many lines, not handed to its writer goroutine.
func TestInlineWritesNeedNoWriterForAFastHost(t *testing.T) {
	agent, aw := pipeAgent(t)
	h, hr := pipeHost(t, "ide", 1<<20, HostOptions{Blocking: true})
	stop := runHosts(t, agent, h)
	lines := floodLines(2000)
	go func() {
		io.WriteString(aw, strings.Join(lines, "\n")+"\n")
		aw.Close()
	}()
	sc := bufio.NewScanner(hr)
	sc.Buffer(nil, 1<<20)
	for i, want := range lines {
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("line %d: got %.80q, want %.80q (%v)", i, sc.Text(), want, sc.Err())
		}
	}
	stop()
	if h.inlined.Load() == 0 {
		t.Errorf("no batch was written inline")
	}
}

// TestInlineWritesDoNotStallTheAgentForAStuckHost: a remote host whose
// pipe nobody reads is disconnected as too slow once its queue is full,
// the rest of an inline write it could not take counted in that queue;
// the agent and another host carry on and that host gets every line.
func TestInlineWritesDoNotStallTheAgentForAStuckHost(t *testing.T) {
	agent, aw := pipeAgent(t)
	fast, fr := pipeHost(t, "ide", 1<<20, HostOptions{Blocking: true})
	stuck, sr := pipeHost(t, "remote", 4096, HostOptions{QueueLen: 64})
	stop := runHosts(t, agent, fast, stuck)
	lines := floodLines(5000)
	go func() {
		io.WriteString(aw, strings.Join(lines, "\n")+"\n")
		aw.Close()
	}()
	sc := bufio.NewScanner(fr)
	sc.Buffer(nil, 1<<20)
	for i, want := range lines {
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("line %d: got %.80q, want %.80q (%v)", i, sc.Text(), want, sc.Err())
		}
	}
	select {
	case <-stuck.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the stuck host was never disconnected")
	}
	if err := stuck.Err(); !errors.Is(err, ErrHostTooSlow) {
		t.Errorf("stuck host: %v, want ErrHostTooSlow", err)
	}
	sr.Close() // ends the stuck writer's write
	stop()
}

// TestRawPipeReaderReadsWaitsAndEnds: the agent's stdout read with raw
// system calls still waits in the poller for the agent's next bytes,
// returns io.EOF once the agent closed its end, and a read waiting when
// acpmux closes the pipe (closeStdout) returns at once with an error.
func TestRawPipeReaderReadsWaitsAndEnds(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rr := rawPipeReader(r)
	if _, ok := rr.(rawReader); !ok {
		t.Fatalf("rawPipeReader(os.Pipe) = %T, want rawReader", rr)
	}
	got := make(chan string)
	go func() {
		buf := make([]byte, 64)
		n, err := rr.Read(buf) // waits: nothing written yet
		got <- fmt.Sprint(string(buf[:n]), err)
		_, err = rr.Read(buf)
		got <- fmt.Sprint(err)
	}()
	io.WriteString(w, "line\n")
	if g := <-got; g != "line\n<nil>" {
		t.Fatalf("first read: %q", g)
	}
	w.Close()
	if g := <-got; g != "EOF" {
		t.Fatalf("read after the writer closed: %q, want EOF", g)
	}

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	rr2 := rawPipeReader(r2)
	done := make(chan error)
	go func() { _, err := rr2.Read(make([]byte, 64)); done <- err }()
	r2.Close()
	if err := <-done; err == nil {
		t.Fatal("a read waiting when the pipe was closed returned no error")
	}
}

// TestABurstInTheAgentsPipeReachesTheHostInFewWrites: lines the agent
// wrote in one burst, already in its pipe when the reader runs, are read
// on before they are handed to the host (lineReader.fillNow), so that the
// host gets them in batches of up to maxPending lines, not one batch per
// read of the pipe (a block, blockBytes); every line arrives whole and in
// order.
func TestABurstInTheAgentsPipeReachesTheHostInFewWrites(t *testing.T) {
	agent, aw := pipeAgent(t)
	GrowPipe(aw) // the pipe's capacity takes the whole burst
	lines := floodLines(3000)
	burst := strings.Join(lines, "\n") + "\n"
	if len(burst) > 1<<20 || len(burst) < 3*blockBytes {
		t.Fatalf("the burst is %d bytes: it must fit the pipe and take several reads", len(burst))
	}
	if _, err := io.WriteString(aw, burst); err != nil {
		t.Fatal(err)
	}
	aw.Close()
	h, hr := pipeHost(t, "ide", 1<<20, HostOptions{Blocking: true})
	stop := runHosts(t, agent, h)
	sc := bufio.NewScanner(hr)
	sc.Buffer(nil, 1<<20)
	for i, want := range lines {
		if !sc.Scan() || sc.Text() != want {
			t.Fatalf("line %d: got %.80q, want %.80q (%v)", i, sc.Text(), want, sc.Err())
		}
	}
	stop()
	batches := (len(lines) + maxPending - 1) / maxPending
	if n := h.inlined.Load(); n == 0 || n > int64(batches)+1 {
		t.Errorf("the host got the burst in %d writes, want at most %d (batches of %d lines)", n, batches+1, maxPending)
	}
}
