package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// DefaultMaxLineBytes is the default cap on one NDJSON message: 64 MiB,
// the size other ACP clients and agents accept for one message.
const DefaultMaxLineBytes = 64 << 20

// ErrLineTooLong reports an NDJSON line longer than the reader's cap. The
// rest of the line is discarded; reading may continue with the next line.
var ErrLineTooLong = errors.New("line too long")

// lineReader reads newline-delimited messages of at most max bytes.
//
// It reads straight into blocks of blockBytes and returns each line as a
// slice of its block, so a line is never copied: a block is never written
// again where a line was handed out (new input only goes after the
// returned lines, and a full block is replaced by a new one, the line in
// progress copied over). The collector frees a block once no line in it is
// referenced.
//
// A recycling reader (recycle set: the agent's stdout) lends its lines
// instead (readShared): its blocks are lineBlocks, counted, and a block
// whose every holder has released it goes back to blockPool for the next
// read, so a flood reuses a few blocks instead of allocating (and page
// faulting in) a new one for every block read.
type lineReader struct {
	r          io.Reader
	max        int
	skip       bool   // the current line went over the cap: discard up to its end
	buf        []byte // the current block; buf[start:end] is read, not yet returned
	start, end int
	shared     bool  // a line of buf was handed out: buf is never reused
	err        error // the read error, returned once the lines before it are
	nl         int   // where lineBuffered found the first "\n" of buf[start:end], else -1

	recycle bool       // lend lines in counted blocks (readShared)
	blk     *lineBlock // recycling: the current block (buf is blk.buf), one reference held by the reader
	lineBlk *lineBlock // recycling: the block of the line read last, nil when that line is a copy
	lineOff int        // recycling: where in lineBlk the line read last starts, -1 when it ends without "\n"
}

// lineBlock is a block of a recycling lineReader. refs counts its holders:
// the reader while the block is current, and each consumer that retained
// it to keep lines of it past the next read. At zero the block goes back
// to blockPool (a block grown for a long line is left to the collector).
//
// Ownership rule: a line lent by readShared is valid until the next
// readShared. A consumer that keeps it, or any slice of it, longer must
// either retain the block (and release it once it no longer reads the
// line: a host's writer once the line is written) or copy what it keeps
// (the replay log, the broker, a tap). Releasing a block early lets the
// reader overwrite lines still queued elsewhere.
type lineBlock struct {
	buf  []byte
	refs atomic.Int32
}

// blockPool holds released blocks of blockBytes; blocksMade counts the
// blocks it had to make (the rest were reused).
var (
	blockPool = sync.Pool{New: func() any {
		blocksMade.Add(1)
		return &lineBlock{buf: make([]byte, blockBytes)}
	}}
	blocksMade atomic.Int64
)

// retain adds a holder of b (nil: a line the holder owns, nothing to do).
// Only the reader's goroutine retains, while the block's lines are still
// valid, so a block is never retained after it went back to the pool.
func (b *lineBlock) retain() {
	if b != nil {
		b.refs.Add(1)
	}
}

// release drops a holder of b (nil: nothing to do); the last one returns
// b to blockPool.
func (b *lineBlock) release() {
	if b == nil {
		return
	}
	switch n := b.refs.Add(-1); {
	case n == 0 && cap(b.buf) == blockBytes:
		blockPool.Put(b)
	case n < 0:
		panic("bridge: line block released more often than retained")
	}
}

// ioBytes is the buffer size of an NDJSON writer: messages of the bridge's
// own move in writes of up to 256 KiB, a quarter of the pipes acpmux
// enlarges (pipeBytes).
const ioBytes = 256 << 10

// blockBytes is the size of a lineReader's blocks: a burst of the agent's
// notifications moves in reads of up to 256 KiB and, joined in the hosts'
// batches, in writes straight from the blocks. Each read of a full pipe
// wakes the agent blocked writing to it, so larger reads mean fewer
// wakeups and switches between the agent and acpmux: with the agent
// reader's runs (agentRun) and one processor, the flood of
// bench/floodagent measured 1.36x of the byte copy with 256 KiB blocks
// against 1.50x with 64 KiB (15 interleaved rounds), for about 1 MB more
// peak RSS; 1 MiB was no faster and held 5 MB more (docs/performance.md).
// Every block a host's queue holds stays allocated until the host has
// written it (a queued batch of few bytes of its blocks is copied out
// instead, hostBatch.compact).
const blockBytes = 256 << 10

// minReadBytes is the least free space a read is made into: with less left
// in its block the reader moves on to a new block.
const minReadBytes = 16 << 10

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &lineReader{r: r, max: max, nl: -1}
}

// nowReader is a reader that can also read without waiting: readNow
// returns what is there (0 and a nil error when nothing is).
type nowReader interface {
	readNow(p []byte) (int, error)
}

// fillNow reads, without waiting, what the pipe holds past what is
// buffered (nothing from a reader that cannot: nowReader), and reports
// whether a whole line is now buffered, so that the next read returns at
// once. The agent reader asks it before handing its pending lines to the
// hosts, so that a burst the agent wrote in several writes reaches them
// in fewer, larger writes.
func (lr *lineReader) fillNow() bool {
	if lr.err != nil || lr.skip {
		return false
	}
	lr.fill(true)
	return lr.lineBuffered()
}

// lineBuffered reports whether buf[start:end] holds a whole line (or the
// rest of a line being skipped), so that the next read needs no read of r.
func (lr *lineReader) lineBuffered() bool {
	if lr.end <= lr.start {
		return false
	}
	k := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n')
	if k >= 0 {
		lr.nl = lr.start + k // the next read need not look again
	}
	return k >= 0
}

// next returns the next non-empty line without its "\n" (and "\r\n"), in a
// slice the caller owns (it may share a block with other lines, never a
// byte: appending to it never reaches another line). A line over the cap
// returns an error wrapping ErrLineTooLong after discarding it; io.EOF ends
// the stream (a final line without newline is still returned first).
func (lr *lineReader) next() ([]byte, error) {
	for {
		line, err := lr.read()
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		line = trimEOL(line)
		if len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// read returns the next line with its "\n", or the last bytes before the
// read error with that error.
func (lr *lineReader) read() ([]byte, error) {
	scanned := 0 // bytes of buf[start:end] known to hold no "\n"
	for {
		if lr.skip {
			if k := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); k >= 0 {
				lr.start += k + 1
				lr.skip = false
			} else {
				lr.start = lr.end
			}
		}
		if !lr.skip {
			pending := lr.buf[lr.start:lr.end]
			k := lr.nl - lr.start
			if lr.nl < lr.start || scanned > 0 {
				k = bytes.IndexByte(pending[scanned:], '\n')
			}
			lr.nl = -1
			if k >= 0 {
				n := scanned + k + 1
				line := pending[:n:n]
				lr.lineOff = lr.start
				lr.start += n
				lr.shared = true
				lr.lineBlk = lr.blk
				if len(trimEOL(line)) > lr.max {
					return nil, lr.tooLong()
				}
				if cap(lr.buf) > blockBytes && 2*n < cap(lr.buf) {
					// A shorter line in a block grown for a long one: a
					// copy, so that keeping it does not keep that block.
					line = append(make([]byte, 0, n), line...)
					lr.lineBlk = nil
				}
				return line, nil
			}
			scanned = len(pending)
			size := len(pending)
			if size > 0 && pending[size-1] == '\r' {
				size-- // may be the "\r" of a "\r\n"
			}
			if size > lr.max {
				// Report at once, before the rest of the line arrives (a
				// writer may never send its newline); the next read skips it.
				lr.start = lr.end
				lr.skip = lr.err == nil
				return nil, lr.tooLong()
			}
		}
		if lr.err != nil {
			err := lr.err
			lr.err = nil
			line := lr.buf[lr.start:lr.end:lr.end]
			lr.start = lr.end
			lr.shared = lr.shared || len(line) > 0
			lr.lineBlk = lr.blk
			lr.lineOff = -1
			return line, err
		}
		lr.fill(false)
	}
}

func (lr *lineReader) tooLong() error {
	return fmt.Errorf("%w: more than %d bytes, the cap is %d (--max-line-bytes)", ErrLineTooLong, lr.max, lr.max)
}

// fill reads once more, into a new block when the current one has less
// than minReadBytes free or was grown for a long line that is done (the
// line in progress moves to the new block). A block grows for a long
// line by doubling, never past the cap and one block: a line over the
// cap is refused and discarded as it arrives, in blocks of blockBytes.
// With now, it reads only what is there without waiting (a reader that
// can: nowReader), and nothing at all from any other reader.
func (lr *lineReader) fill(now bool) {
	lr.nl = -1
	grown := cap(lr.buf) > blockBytes && 2*(lr.end-lr.start) <= blockBytes
	if cap(lr.buf)-lr.end < minReadBytes || grown {
		pending := lr.buf[lr.start:lr.end]
		size := blockBytes
		if 2*len(pending) > blockBytes {
			// A long line: double the block, up to the most a line
			// within the cap needs (its "\r" and a read's room past it:
			// longer, read refuses it before the next fill). Once a
			// doubling would pass half of that, go there at once, so
			// the old block is at most about half the new one.
			size = 2 * len(pending)
			if full := lr.max + 1 + blockBytes; 2*size > full {
				size = full
			}
		}
		if lr.recycle {
			lr.nextBlock(pending, size)
		} else {
			if lr.shared || cap(lr.buf) != size {
				lr.buf = make([]byte, size)
				lr.shared = false
			}
			lr.buf = lr.buf[:cap(lr.buf)]
			lr.start, lr.end = 0, copy(lr.buf, pending)
		}
	}
	if now {
		if r, ok := lr.r.(nowReader); ok {
			n, err := r.readNow(lr.buf[lr.end:])
			lr.end += n
			lr.err = err
		}
		return
	}
	for range 100 {
		n, err := lr.r.Read(lr.buf[lr.end:])
		if n < 0 || n > len(lr.buf)-lr.end {
			lr.err = errors.New("invalid read count")
			return
		}
		lr.end += n
		if err != nil {
			lr.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	lr.err = io.ErrNoProgress
}

// nextBlock makes a block of size bytes current, with pending (the line in
// progress) at its start, for a recycling reader: the current block itself
// when no one else holds it (only the reader's goroutine retains, so a
// count of one here cannot grow), else one from blockPool (or a new one
// for a long line), releasing the reader's hold on the old one.
func (lr *lineReader) nextBlock(pending []byte, size int) {
	old := lr.blk
	if old != nil && old.refs.Load() == 1 && len(old.buf) == size {
		lr.start, lr.end = 0, copy(old.buf, pending)
		return
	}
	var nb *lineBlock
	if size == blockBytes {
		nb = blockPool.Get().(*lineBlock)
	} else {
		nb = &lineBlock{buf: make([]byte, size)}
	}
	nb.refs.Store(1)
	lr.blk, lr.buf = nb, nb.buf
	lr.start, lr.end = 0, copy(lr.buf, pending)
	old.release()
}

// readShared is next for a recycling reader: it lends the line, valid
// until the next call, with its block (nil when the line is the caller's
// own). See lineBlock for keeping it longer. On a reader that does not
// recycle it is next, and the block is always nil.
func (lr *lineReader) readShared() ([]byte, *lineBlock, error) {
	lr.lineBlk = nil
	line, err := lr.next()
	if err != nil || !lr.recycle {
		return line, nil, err
	}
	return line, lr.lineBlk, nil
}

// peekLine returns the next line of a recycling reader's current block,
// without its "\n", and where it starts in the block, without reading:
// nil when no whole line is buffered there, or the next line is empty,
// ends in "\r\n", is over the cap or is being skipped (next returns
// those). takeLine takes it.
func (lr *lineReader) peekLine() (line []byte, off int) {
	if !lr.recycle || lr.skip || lr.blk == nil || cap(lr.buf) != blockBytes {
		return nil, -1
	}
	p := lr.buf[lr.start:lr.end]
	k := bytes.IndexByte(p, '\n')
	if k <= 0 || p[k-1] == '\r' || k > lr.max {
		return nil, -1
	}
	return p[:k:k], lr.start
}

// takeLine takes the n-byte line peekLine returned, as readShared lends
// a line: valid until the next read unless its block is retained.
func (lr *lineReader) takeLine(n int) {
	lr.lineOff = lr.start
	lr.lineBlk = lr.blk
	lr.start += n + 1
	lr.shared = true
	lr.nl = -1
}

// lentAt returns where the line readShared lent last starts in its block
// when a "\n" follows it there (blk.buf[off:off+len(line)] is the line and
// blk.buf[off+len(line)] == '\n'), else -1: no block, a line that ended
// in "\r\n" or at the end of the input. Consecutive lines at off and
// off+len+1 lie one after the other, newline between, in one block.
func (lr *lineReader) lentAt(line []byte) int {
	off := lr.lineOff
	if lr.lineBlk == nil || off < 0 {
		return -1
	}
	if end := off + len(line); end >= len(lr.lineBlk.buf) || lr.lineBlk.buf[end] != '\n' {
		return -1
	}
	return off
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
