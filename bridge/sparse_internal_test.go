package bridge

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// gatedWriter blocks every Write until open is closed, after telling
// entered (once) that a write is waiting; then it keeps what it is given.
type gatedWriter struct {
	open, entered chan struct{}
	once          sync.Once
	mu            sync.Mutex // guards out
	out           bytes.Buffer
}

func newGatedWriter() *gatedWriter {
	return &gatedWriter{open: make(chan struct{}), entered: make(chan struct{})}
}

func (w *gatedWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

// gatedConn is a Conn that writes one message at a time, as a WebSocket
// host does (not NDJSON: its batches never join lines), blocking like
// gatedWriter.
type gatedConn struct {
	w    *gatedWriter
	msgs chan string
}

func (c gatedConn) ReadMessage() ([]byte, error) { select {} }
func (c gatedConn) WriteMessages(msgs [][]byte) error {
	for _, m := range msgs {
		c.w.Write(nil)
		c.msgs <- string(m)
	}
	return nil
}
func (c gatedConn) Close() error { return nil }

// queuedBlocks returns how many distinct blocks the batches in h's queue
// retain. The host's writer must be stuck in a write: the batches are
// taken out of the queue and put back in their order.
func queuedBlocks(h *Host) int {
	var batches []hostBatch
	for len(h.queue) > 0 {
		batches = append(batches, <-h.queue)
	}
	seen := map[*lineBlock]bool{}
	for _, hb := range batches {
		for _, blk := range hb.blocks {
			seen[blk] = true
		}
		h.queue <- hb
	}
	return len(seen)
}

// TestStuckHostOfAQuietSessionPinsBlocksByItsBytes: hosts attached only to
// session B, whose writers are stuck, while the IDE's session A floods so
// that each of B's notifications lies in another block of the agent's
// stdout: the blocks their queues retain stay bounded by the bytes queued
// (at most 4 times them, plus one block), not one block a message, for an
// NDJSON host and for a host that writes one message at a time (a
// WebSocket). Once they write again, each gets every line of B, byte for
// byte and in order, and the IDE every line of A.
func TestStuckHostOfAQuietSessionPinsBlocksByItsBytes(t *testing.T) {
	for _, replay := range []int{0, -1} { // -1: the reader routes runs (agentRun)
		t.Run(fmt.Sprintf("replay=%d", replay), func(t *testing.T) { stuckHostOfAQuietSession(t, replay) })
	}
}

func stuckHostOfAQuietSession(t *testing.T, replay int) {
	const quiet, between = 60, blockBytes / 200 // B's lines, and A's lines (over a block, about 210 bytes each) before each
	var in, wantA, wantB bytes.Buffer
	var linesB []string
	for i := range quiet {
		for j := range between {
			l := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"A","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"flood %d.%d %s"}}}}`, i, j, strings.Repeat("a", j%64))
			in.WriteString(l + "\n")
			wantA.WriteString(l + "\n")
		}
		l := fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"B","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"quiet %d %s"}}}}`, i, strings.Repeat("b", i))
		in.WriteString(l + "\n")
		wantB.WriteString(l + "\n")
		linesB = append(linesB, l)
	}

	agent := &Agent{exited: make(chan struct{})}
	agent.conn = newRecyclingConn(bytes.NewReader(in.Bytes()), &bytes.Buffer{}, nil, 0)
	b := New(agent, Options{ReplayMaxBytes: replay})
	var ideOut writeRecorder
	ide := NewHost("ide", NewNDJSONConn(eofReader{}, &ideOut, nil, 0), HostOptions{Blocking: true})
	nw := newGatedWriter()
	nd := NewHost("ndjson", NewNDJSONConn(eofReader{}, nw, nil, 0), HostOptions{})
	ws := gatedConn{w: newGatedWriter(), msgs: make(chan string, quiet)}
	wh := NewHost("ws", ws, HostOptions{})
	b.mu.Lock()
	b.primary = ide
	b.hosts = []*Host{ide, nd, wh}
	b.addSessionLocked("A", "/tmp", ide)
	b.addSessionLocked("B", "/tmp", nd)
	b.sessions["B"].addHost(wh)
	b.mu.Unlock()
	for _, h := range []*Host{ide, nd, wh} {
		go h.writeLoop()
	}

	b.readAgent()
	<-nw.entered
	<-ws.w.entered
	for _, h := range []*Host{nd, wh} {
		if err := h.Err(); err != nil {
			t.Fatalf("%s: disconnected: %v", h.ID, err)
		}
		blocks, queued := queuedBlocks(h), int(h.queued.Load()+h.msgs.Load())
		if blocks*blockBytes > 4*queued+blockBytes {
			t.Errorf("%s: its queue retains %d blocks (%d KiB) for %d queued bytes in %d messages; want at most %d",
				h.ID, blocks, blocks*blockBytes>>10, queued, h.msgs.Load(), (4*queued+blockBytes)/blockBytes)
		}
	}

	close(nw.open)
	close(ws.w.open)
	for _, h := range []*Host{ide, nd, wh} {
		h.finish()
		<-h.wdone
	}
	if got := ideOut.out.String(); got != wantA.String() {
		t.Errorf("ide: got %d bytes, want session A's %d, byte for byte", len(got), wantA.Len())
	}
	if got := nw.out.String(); got != wantB.String() {
		t.Errorf("ndjson host: got %.200q..., want session B's lines", got)
	}
	close(ws.msgs)
	i := 0
	for got := range ws.msgs {
		if i >= len(linesB) || got != linesB[i] {
			t.Fatalf("ws host: message %d is %.120q, want %.120q", i, got, linesB[min(i, len(linesB)-1)])
		}
		i++
	}
	if i != len(linesB) {
		t.Errorf("ws host: got %d messages, want %d", i, len(linesB))
	}
}

// TestDenseBatchIsQueuedFromItsBlock: a batch of many lines of one block
// (a flood) goes to the queue as it is, one entry in the block, the
// block retained: no copy. A batch of one short line of that block is
// copied out and holds no block.
func TestDenseBatchIsQueuedFromItsBlock(t *testing.T) {
	var lines []string
	for i := range blockBytes / 4 / 150 {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"n":%d,"text":%q}}`, i, strings.Repeat("d", 150)))
	}
	blk, offs := blockOf(lines...)
	h := NewHost("ide", NewNDJSONConn(eofReader{}, &bytes.Buffer{}, nil, 0), HostOptions{})
	var dense hostBatch
	for i, l := range lines {
		dense.addLine(blk.buf[offs[i]:offs[i]+len(l)], blk, offs[i])
	}
	if !h.sendBatch(dense) {
		t.Fatal("sendBatch refused")
	}
	q := <-h.queue
	if len(q.blocks) != 1 || len(q.msgs) != 1 || &q.msgs[0][0] != &blk.buf[0] || blk.refs.Load() != 2 {
		t.Errorf("dense batch queued as %d entries, %d blocks (refs %d); want one entry in the block, retained", len(q.msgs), len(q.blocks), blk.refs.Load())
	}
	q.release()

	var sparse hostBatch
	sparse.addLine(blk.buf[offs[7]:offs[7]+len(lines[7])], blk, offs[7])
	if !h.sendBatch(sparse) {
		t.Fatal("sendBatch refused")
	}
	q = <-h.queue
	m := q.msgs[0]
	if len(q.blocks) != 0 || blk.refs.Load() != 1 || string(m) != lines[7] || m[:len(m)+1][len(m)] != '\n' {
		t.Errorf("sparse batch queued with %d blocks (refs %d), entry %.60q; want a copy with its newline, no block", len(q.blocks), blk.refs.Load(), m)
	}
	if q.n != 1 || q.bytes != len(lines[7]) {
		t.Errorf("sparse batch counts %d messages of %d bytes, want 1 of %d", q.n, q.bytes, len(lines[7]))
	}
}
