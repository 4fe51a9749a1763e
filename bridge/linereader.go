package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
type lineReader struct {
	r          io.Reader
	max        int
	skip       bool   // the current line went over the cap: discard up to its end
	buf        []byte // the current block; buf[start:end] is read, not yet returned
	start, end int
	shared     bool  // a line of buf was handed out: buf is never reused
	err        error // the read error, returned once the lines before it are
}

// ioBytes is the buffer size of an NDJSON writer and the block size of an
// NDJSON reader: a burst of notifications moves in reads and writes of up
// to 256 KiB, a quarter of the pipes acpmux enlarges (pipeBytes), with four
// times fewer system calls than 64 KiB.
const ioBytes = 256 << 10

// blockBytes is the size of a lineReader's blocks.
const blockBytes = ioBytes

// minReadBytes is the least free space a read is made into: with less left
// in its block the reader moves on to a new block.
const minReadBytes = 16 << 10

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &lineReader{r: r, max: max}
}

// buffered returns how many bytes are read but not yet returned as lines.
func (lr *lineReader) buffered() int { return lr.end - lr.start }

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
			if k := bytes.IndexByte(pending[scanned:], '\n'); k >= 0 {
				n := scanned + k + 1
				line := pending[:n:n]
				lr.start += n
				lr.shared = true
				if len(trimEOL(line)) > lr.max {
					return nil, lr.tooLong()
				}
				if cap(lr.buf) > blockBytes && 2*n < cap(lr.buf) {
					// A shorter line in a block grown for a long one: a
					// copy, so that keeping it does not keep that block.
					line = append(make([]byte, 0, n), line...)
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
			return line, err
		}
		lr.fill()
	}
}

func (lr *lineReader) tooLong() error {
	return fmt.Errorf("%w: more than %d bytes, the cap is %d (--max-line-bytes)", ErrLineTooLong, lr.max, lr.max)
}

// fill reads once more, into a new block when the current one has less
// than minReadBytes free or was grown for a long line that is done (the
// line in progress moves to the new block).
func (lr *lineReader) fill() {
	grown := cap(lr.buf) > blockBytes && 2*(lr.end-lr.start) <= blockBytes
	if cap(lr.buf)-lr.end < minReadBytes || grown {
		pending := lr.buf[lr.start:lr.end]
		size := max(blockBytes, 2*len(pending))
		if lr.shared || cap(lr.buf) != size {
			lr.buf = make([]byte, size)
			lr.shared = false
		}
		lr.buf = lr.buf[:cap(lr.buf)]
		lr.start, lr.end = 0, copy(lr.buf, pending)
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

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}
