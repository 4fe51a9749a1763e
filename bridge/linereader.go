package bridge

import (
	"bufio"
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
type lineReader struct {
	r    *bufio.Reader
	max  int
	skip bool // the current line went over the cap: discard up to its end
	// slab is the rest of the block lines are copied into: one allocation
	// for many lines. A slab is never reused; the collector frees it once
	// no line in it is referenced.
	slab []byte
}

// ioBytes is the buffer size of an NDJSON reader and writer: a burst of
// notifications moves in reads and writes of up to 256 KiB, a quarter of
// the pipes acpmux enlarges (pipeBytes), with four times fewer system
// calls than 64 KiB.
const ioBytes = 256 << 10

// slabBytes is the size of a lineReader's slab; a line over a quarter of
// it gets an allocation of its own.
const slabBytes = 256 << 10

// own returns a copy of frag that the caller owns, capped at its length.
func (lr *lineReader) own(frag []byte) []byte {
	n := len(frag)
	if n > slabBytes/4 {
		return append(make([]byte, 0, n), frag...)
	}
	if cap(lr.slab)-len(lr.slab) < n {
		lr.slab = make([]byte, 0, slabBytes)
	}
	off := len(lr.slab)
	lr.slab = append(lr.slab, frag...)
	return lr.slab[off : off+n : off+n]
}

func newLineReader(r io.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &lineReader{r: bufio.NewReaderSize(r, ioBytes), max: max}
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

func (lr *lineReader) read() ([]byte, error) {
	if lr.skip {
		lr.skip = false
		if _, err := lr.discard(); err != nil {
			return nil, err
		}
	}
	frag, err := lr.r.ReadSlice('\n')
	if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
		return lr.own(frag), err
	}
	buf := append(make([]byte, 0, 2*len(frag)), frag...)
	for {
		frag, err = lr.r.ReadSlice('\n')
		size := len(buf) + len(frag)
		if err == nil {
			size-- // the "\n" is not part of the message, nor a "\r" before it
			if n := len(frag); n >= 2 && frag[n-2] == '\r' || n == 1 && buf[len(buf)-1] == '\r' {
				size--
			}
		}
		if size > lr.max {
			// Report at once, before the rest of the line arrives (a
			// writer may never send its newline); the next read skips it.
			lr.skip = errors.Is(err, bufio.ErrBufferFull)
			return nil, fmt.Errorf("%w: more than %d bytes, the cap is %d (--max-line-bytes)", ErrLineTooLong, lr.max, lr.max)
		}
		buf = append(buf, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

// discard skips to the end of the current line.
func (lr *lineReader) discard() (int, error) {
	n := 0
	for {
		frag, err := lr.r.ReadSlice('\n')
		n += len(frag)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return n, err
		}
	}
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
