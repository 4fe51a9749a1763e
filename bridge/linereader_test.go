package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"
	"unsafe"
)

// TestLineReaderReportsOversizeBeforeNewline: a writer that sends more than
// the cap and never a newline gets ErrLineTooLong at once, not when (if
// ever) its newline arrives; the next line after it is read normally.
func TestLineReaderReportsOversizeBeforeNewline(t *testing.T) {
	r, w := io.Pipe()
	lr := newLineReader(r, 1<<20)
	go func() {
		w.Write(bytes.Repeat([]byte("x"), 2<<20)) // no newline yet
	}()
	done := make(chan error, 1)
	go func() { _, err := lr.next(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("err = %v, want ErrLineTooLong", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error while the oversize line is still open")
	}
	go func() { w.Write([]byte("tail of the long line\n{\"ok\":1}\n")); w.Close() }()
	got, err := lr.next()
	if err != nil || string(got) != `{"ok":1}` {
		t.Fatalf("next line = %q, %v; want {\"ok\":1}", got, err)
	}
}

// TestLineReaderLimits: a line of exactly the cap passes; CRLF is trimmed;
// blank lines are skipped; a last line without newline is returned.
func TestLineReaderLimits(t *testing.T) {
	line := strings.Repeat("y", 200<<10)
	lr := newLineReader(strings.NewReader(line+"\r\n\n\nlast"), 200<<10)
	if got, err := lr.next(); err != nil || len(got) != len(line) {
		t.Fatalf("exact cap: %d bytes, %v", len(got), err)
	}
	if got, err := lr.next(); err != nil || string(got) != "last" {
		t.Fatalf("last line: %q, %v", got, err)
	}
	if _, err := lr.next(); err != io.EOF {
		t.Fatalf("after the end: %v, want io.EOF", err)
	}
}

// TestBlockingHostQueueIsBoundedInBytes: a blocking host that stops reading
// makes its sender wait once DefaultHostQueueBytes are queued, instead of
// buffering without bound. In a bubble, synctest.Wait returns once the
// sender is blocked on the full queue and the writer on the stalled conn.
func TestBlockingHostQueueIsBoundedInBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stall := make(chan struct{})
		h := NewHost("ide", stallConn{stall}, HostOptions{Blocking: true})
		go h.writeLoop()
		defer func() { close(stall); h.disconnect(errBridgeClosed) }()
		msg := bytes.Repeat([]byte("z"), 1<<20)
		// One message is in the stalled writer; the queue holds at most 64 MiB.
		limit := DefaultHostQueueBytes>>20 + 2
		sent := make(chan int, 1)
		go func() {
			n := 0
			for n <= limit && h.send(msg) { // past the limit the test has failed: stop
				n++
				select {
				case sent <- n:
				default:
					<-sent
					sent <- n
				}
			}
		}()
		synctest.Wait() // the sender has run into the bound
		n := <-sent
		if n > limit {
			t.Errorf("%d MiB queued for a host that does not read, want at most %d", n, limit)
		}
		if q := h.queued.Load(); q > DefaultHostQueueBytes+1<<20 {
			t.Errorf("queued bytes %d over the bound", q)
		}
	})
}

// stallConn never finishes a write until stall is closed.
type stallConn struct{ stall chan struct{} }

func (c stallConn) ReadMessage() ([]byte, error) { <-c.stall; return nil, io.EOF }
func (c stallConn) WriteMessages([][]byte) error { <-c.stall; return io.ErrClosedPipe }
func (c stallConn) Close() error                 { return nil }

// TestLineReaderLinesStayIntact: lines are slices of the reader's blocks,
// not copies; every line handed out keeps its bytes while the reader goes
// on through many blocks, including lines split across a block boundary,
// and appending to a line never reaches the next one.
func TestLineReaderLinesStayIntact(t *testing.T) {
	var in bytes.Buffer
	var want []string
	for i := 0; in.Len() < 4*blockBytes; i++ {
		l := fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat("p", i%3000))
		want = append(want, l)
		in.WriteString(l + "\n")
	}
	lr := newLineReader(iotest.HalfReader(&in), 0)
	var got [][]byte
	for {
		l, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range got {
		_ = append(got[i], 'X')
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Fatalf("line %d = %.40q..., want %.40q...", i, got[i], want[i])
		}
	}
}

// TestLineReaderCapAppliesToShortLines: the cap holds for a line that fits
// the reader's block, and the line after it is read.
func TestLineReaderCapAppliesToShortLines(t *testing.T) {
	lr := newLineReader(strings.NewReader(strings.Repeat("z", 101)+"\r\n"+strings.Repeat("y", 100)+"\r\n"), 100)
	if _, err := lr.next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("101 bytes with a cap of 100: %v, want ErrLineTooLong", err)
	}
	if got, err := lr.next(); err != nil || len(got) != 100 {
		t.Fatalf("next line: %d bytes, %v; want 100", len(got), err)
	}
}

// TestLineReaderLongLineDoesNotPinItsBlock: after a line longer than a
// block, the reader goes back to blocks of the usual size, and a short line
// read with the long one does not share the long one's block.
func TestLineReaderLongLineDoesNotPinItsBlock(t *testing.T) {
	long := strings.Repeat("l", 3*blockBytes)
	lr := newLineReader(strings.NewReader(long+"\n{\"short\":1}\n"), 0)
	got, err := lr.next()
	if err != nil || len(got) != len(long) {
		t.Fatalf("long line: %d bytes, %v", len(got), err)
	}
	short, err := lr.next()
	if err != nil || string(short) != `{"short":1}` {
		t.Fatalf("short line: %q, %v", short, err)
	}
	// Read together, the short line would follow the long one's "\n".
	if uintptr(unsafe.Pointer(&short[0]))-uintptr(unsafe.Pointer(&got[0])) == uintptr(len(got)+1) {
		t.Error("the short line shares the long line's block: keeping it keeps that block")
	}
	lr.next() // io.EOF
	if cap(lr.buf) > blockBytes {
		t.Errorf("the reader keeps a block of %d bytes after the long line", cap(lr.buf))
	}
}

// TestRecyclingReaderKeepsRetainedBlocks: a recycling reader never writes
// again into a block someone retained, however far it reads on, and
// reuses a block once its last holder released it.
func TestRecyclingReaderKeepsRetainedBlocks(t *testing.T) {
	var in bytes.Buffer
	var want []string
	for i := 0; in.Len() < 12*blockBytes; i++ {
		l := fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i%26)), i%2000))
		want = append(want, l)
		in.WriteString(l + "\n")
	}
	lr := newLineReader(iotest.HalfReader(&in), 0)
	lr.recycle = true
	type held struct {
		line []byte
		blk  *lineBlock
		i    int
	}
	var kept []held
	seen := map[*lineBlock]bool{}
	reused := false
	var prev *lineBlock
	var prevStart uintptr
	for i := 0; ; i++ {
		l, blk, err := lr.readShared()
		if err == io.EOF {
			break
		}
		if err != nil || blk == nil {
			t.Fatalf("line %d: block %p, %v", i, blk, err)
		}
		if string(l) != want[i] {
			t.Fatalf("line %d = %.40q..., want %.40q...", i, l, want[i])
		}
		// Reused: a block met again after others, or the current one
		// read into from its start again.
		start := uintptr(unsafe.Pointer(&l[0]))
		if (blk != prev && seen[blk]) || (blk == prev && start < prevStart) {
			reused = true
		}
		seen[blk], prev, prevStart = true, blk, start
		switch {
		case i%3 == 0 && i < len(want)/2:
			// Kept to the end: the first half's blocks are never reused.
			if len(kept) == 0 || kept[len(kept)-1].blk != blk {
				blk.retain()
			}
			kept = append(kept, held{l, blk, i})
		case i >= len(want)/2:
			blk.retain() // a host's writer: released at once
			blk.release()
		}
	}
	for _, k := range kept {
		if string(k.line) != want[k.i] {
			t.Fatalf("kept line %d = %.40q..., want %.40q...", k.i, k.line, want[k.i])
		}
	}
	if !reused {
		t.Error("no block was reused after its holders released it")
	}
	for i, k := range kept {
		if i == 0 || kept[i-1].blk != k.blk {
			k.blk.release()
		}
	}
}

// bufWatcher is an endless line of "x" (no newline) for a lineReader,
// recording the largest block the reader reads into.
type bufWatcher struct {
	lr      *lineReader
	left    int // bytes of the line still to give, then rest
	rest    io.Reader
	maxCap  int
	largest int // the largest single read asked for
}

func (w *bufWatcher) Read(p []byte) (int, error) {
	w.maxCap = max(w.maxCap, cap(w.lr.buf))
	w.largest = max(w.largest, len(p))
	if w.left == 0 {
		return w.rest.Read(p)
	}
	n := min(len(p), w.left)
	for i := range n {
		p[i] = 'x'
	}
	w.left -= n
	return n, nil
}

// TestLineReaderOverCapGrowsNoFurtherThanCapAndABlock: a line many times
// the cap, without a newline for long, is refused once it is over the cap
// and discarded, and the reader's block never grows past the cap and one
// block (doubling the block as it did, a 300 MB line peaked near twice the
// cap in blocks, the old one and the new); the line after it is read as
// usual, and so is a line of exactly the cap. For the plain and the
// recycling (agent's stdout) reader.
func TestLineReaderOverCapGrowsNoFurtherThanCapAndABlock(t *testing.T) {
	const limit = 3<<20 + 12345 // not a power of two: doubling overshoots it
	for _, recycle := range []bool{false, true} {
		exact := strings.Repeat("y", limit)
		w := &bufWatcher{left: 5 * limit, rest: strings.NewReader("tail\n{\"ok\":1}\n" + exact + "\r\n")}
		lr := newLineReader(w, limit)
		lr.recycle = recycle
		w.lr = lr
		if _, err := lr.next(); !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("recycle %v: a line of 5 caps: %v, want ErrLineTooLong", recycle, err)
		}
		got, err := lr.next()
		if err != nil || string(got) != `{"ok":1}` {
			t.Fatalf("recycle %v: next line = %q, %v; want {\"ok\":1}", recycle, got, err)
		}
		if got, err := lr.next(); err != nil || len(got) != limit {
			t.Fatalf("recycle %v: a line of exactly the cap: %d bytes, %v", recycle, len(got), err)
		}
		if w.maxCap > limit+1+blockBytes {
			t.Errorf("recycle %v: the reader grew its block to %d bytes for a cap of %d; want at most the cap, its \"\\r\" and a block (%d)", recycle, w.maxCap, limit, limit+1+blockBytes)
		}
	}
}
