package bridge

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// writeRecorder records the slices it is asked to write.
type writeRecorder struct {
	writes [][]byte
	out    bytes.Buffer
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, p)
	w.out.Write(p)
	return len(p), nil
}

// blockOf returns a block holding lines, each followed by "\n", and where
// each line starts in it.
func blockOf(lines ...string) (*lineBlock, []int) {
	blk := &lineBlock{buf: make([]byte, blockBytes)}
	blk.refs.Store(1)
	var offs []int
	at := 0
	for _, l := range lines {
		offs = append(offs, at)
		at += copy(blk.buf[at:], l+"\n")
	}
	return blk, offs
}

// TestLinesOfOneBlockAreWrittenInOneWriteFromTheBlock: lines of the
// agent that lie one after the other in a block and go to an NDJSON host
// are joined in its batch and written with one write system call straight
// from the block, the newlines between them and after the last included:
// no copy into the writer's buffer, one entry instead of one a line. The
// queue still counts each message and its bytes.
func TestLinesOfOneBlockAreWrittenInOneWriteFromTheBlock(t *testing.T) {
	var lines []string
	for i := range 3 {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"n":%d,"text":%q}}`, i, strings.Repeat("x", directBytes)))
	}
	blk, offs := blockOf(lines...)
	var hb hostBatch
	for i, l := range lines {
		hb.addLine(blk.buf[offs[i]:offs[i]+len(l)], blk, offs[i])
	}
	if len(hb.msgs) != 1 || hb.n != 3 || len(hb.blocks) != 1 {
		t.Fatalf("batch of 3 adjacent lines: %d entries, %d messages, %d blocks; want 1, 3, 1", len(hb.msgs), hb.n, len(hb.blocks))
	}
	if want := 3 * len(lines[0]); hb.bytes != want {
		t.Errorf("batch counts %d bytes, want %d (the messages, not their newlines)", hb.bytes, want)
	}
	h := NewHost("ide", discardConn{done: make(chan struct{})}, HostOptions{Blocking: true})
	if !h.queueBatch(hb) {
		t.Fatal("queueBatch refused")
	}
	if q, m := h.queued.Load(), h.msgs.Load(); q != int64(hb.bytes) || m != 3 {
		t.Errorf("queue holds %d bytes in %d messages, want %d in 3", q, m, hb.bytes)
	}

	var w writeRecorder
	c := NewNDJSONConn(strings.NewReader(""), &w, nil, 0)
	if err := c.WriteMessages(hb.msgs); err != nil {
		t.Fatal(err)
	}
	end := offs[2] + len(lines[2]) + 1
	if len(w.writes) != 1 || len(w.writes[0]) != end || &w.writes[0][0] != &blk.buf[0] {
		t.Fatalf("%d writes (first %d bytes), want one write of the block's first %d bytes, from the block", len(w.writes), len(w.writes[0]), end)
	}
	if got, want := w.out.String(), strings.Join(lines, "\n")+"\n"; got != want {
		t.Errorf("wrote %.80q..., want the lines", got)
	}
}

// TestOnlyAdjacentLinesAreJoined: a line is joined to the entry before it
// only when it starts right after that entry's newline in the same block;
// after a gap (a line that went elsewhere, an empty line), after a message
// of the bridge's own, or in another block, it is an entry of its own.
func TestOnlyAdjacentLinesAreJoined(t *testing.T) {
	blk, offs := blockOf("a1", "skipped", "a2", "a3")
	other, ooffs := blockOf("b1")
	var hb hostBatch
	line := func(b *lineBlock, off, n int) { hb.addLine(b.buf[off:off+n], b, off) }
	line(blk, offs[0], 2)
	line(blk, offs[2], 2) // after a gap
	hb.add([]byte("own"), nil)
	line(blk, offs[3], 2) // after a message of the bridge's own
	line(other, ooffs[0], 2)
	var got []string
	for _, m := range hb.msgs {
		got = append(got, string(m))
	}
	if want := []string{"a1", "a2", "own", "a3", "b1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if hb.n != 5 || len(hb.blocks) != 2 {
		t.Errorf("%d messages and %d block holds, want 5 and 2 (one a block)", hb.n, len(hb.blocks))
	}
}

// TestRelayedLinesAreByteForByteWithJoining: the agent's output through
// the bridge to an NDJSON host, with lines joined, is what it was without
// joining: every session/update line as the agent wrote it, "\r\n" and
// empty lines normalized as before, a line whose _meta.acpmux was removed
// and a response in between in their places, across many blocks.
func TestRelayedLinesAreByteForByteWithJoining(t *testing.T) {
	var in, want bytes.Buffer
	for i := range 5000 {
		l := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d %s"}}}}`, i, strings.Repeat("w", i%157))
		switch i % 101 {
		case 3:
			in.WriteString(l + "\r\n")
			want.WriteString(l + "\n")
		case 5:
			in.WriteString("\n" + l + "\n")
			want.WriteString(l + "\n")
		case 7:
			in.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"m"},"_meta":{"acpmux":{"x":1}}}}}` + "\n")
			want.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"m"},"_meta":{}}}}` + "\n")
		default:
			in.WriteString(l + "\n")
			want.WriteString(l + "\n")
		}
	}
	in.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"last, no newline"}}}}`)
	want.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"last, no newline"}}}}` + "\n")

	agent := &Agent{exited: make(chan struct{})}
	agent.conn = newRecyclingConn(bytes.NewReader(in.Bytes()), io.Discard, nil, 0)
	b := New(agent, Options{})
	var w writeRecorder
	h := NewHost("ide", NewNDJSONConn(strings.NewReader(""), &w, nil, 0), HostOptions{Blocking: true})
	b.mu.Lock()
	b.primary = h
	b.hosts = []*Host{h}
	b.addSessionLocked("s1", "/tmp", h)
	b.mu.Unlock()
	go h.writeLoop()
	b.readAgent()
	h.finish()
	<-h.wdone
	if got := w.out.String(); got != want.String() {
		g, x := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(g), len(x)) {
			if g[i] != x[i] {
				t.Fatalf("line %d: got %.120q, want %.120q", i, g[i], x[i])
			}
		}
		t.Fatalf("got %d lines, want %d", len(g), len(x))
	}
}

// TestJoinedLinesAreHandedOverEveryMaxPendingMessages: the agent reader
// hands a host its pending batch once it holds maxPending messages, when
// they were joined into one entry too, so a burst of adjacent lines
// neither waits for the end of the burst nor pins all its blocks.
func TestJoinedLinesAreHandedOverEveryMaxPendingMessages(t *testing.T) {
	lines := make([]string, maxPending+10)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"n":%d}`, i)
	}
	blk, offs := blockOf(lines...)
	b := New(&Agent{exited: make(chan struct{})}, Options{})
	h := NewHost("ide", NewNDJSONConn(strings.NewReader(""), io.Discard, nil, 0), HostOptions{Blocking: true, QueueLen: 16})
	b.line = blk
	for i, l := range lines {
		b.lineAt = offs[i]
		b.enqueue(h, blk.buf[offs[i]:offs[i]+len(l)])
	}
	if len(h.queue) != 1 {
		t.Fatalf("%d batches handed over after %d adjacent lines, want 1 (at %d messages)", len(h.queue), len(lines), maxPending)
	}
	hb := <-h.queue
	if hb.n != maxPending || len(hb.msgs) != 1 {
		t.Errorf("handed-over batch: %d messages in %d entries, want %d in 1", hb.n, len(hb.msgs), maxPending)
	}
	if p := b.pending[0].batch; p.n != 10 {
		t.Errorf("pending after the hand-over: %d messages, want 10", p.n)
	}
}
