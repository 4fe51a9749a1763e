package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/sourcegraph/jsonrpc2"
)

// Conn carries whole JSON-RPC messages to and from one peer. ReadMessage
// returns one message without framing, in a slice the caller owns; it is
// called from one goroutine only. WriteMessages writes a batch of messages
// in order, each as one frame, and is called from one goroutine only; it
// must not keep msgs or any slice of them once it returns (a host's
// writer hands the memory of the agent's lines back for reuse then). Close
// unblocks both and may be called more than once.
type Conn interface {
	ReadMessage() ([]byte, error)
	WriteMessages(msgs [][]byte) error
	Close() error
}

// ndjsonConn is a Conn over newline-delimited JSON (ACP stdio transport).
type ndjsonConn struct {
	lr     *lineReader
	w      *bufio.Writer
	wr     io.Writer // under w: a long message followed by its newline is written to it directly
	closer io.Closer
	once   sync.Once

	rc  syscall.RawConn // wr's file in non-blocking mode, for writeNow; nil: no inline writes
	own io.Closer       // the file nonblockingWriter opened for wr, closed with the conn
	iov []syscall.Iovec // writeNow's pieces, reused
	// sent counts the bytes written to the peer (by wr and writeNow), so
	// that a write in progress shows progress (wroteBytes).
	sent atomic.Int64
}

// countingWriter is w counting the bytes it writes into *n, in writes of
// at most progressBytes, so that a long message shows progress while it
// is written (a pipe takes one in pieces anyway).
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

// progressBytes is the most countingWriter writes at once.
const progressBytes = 1 << 20

func (cw countingWriter) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		k, err := cw.w.Write(p[:min(len(p), progressBytes)])
		cw.n.Add(int64(k))
		total += k
		p = p[k:]
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// wroteBytes returns how many bytes the conn has written to its peer so
// far ([progresser]).
func (c *ndjsonConn) wroteBytes() int64 { return c.sent.Load() }

// NewNDJSONConn returns a Conn that reads lines of at most maxLineBytes from
// r and writes newline-terminated messages to w. closer (may be nil) is
// closed by Close, for example the pipe or file under w. When w is a pipe
// in non-blocking mode (os.Pipe), or acpmux's own stdout over a pipe, the
// agent reader may write the agent's lines to it itself, without waiting
// (see docs/performance.md).
func NewNDJSONConn(r io.Reader, w io.Writer, closer io.Closer, maxLineBytes int) Conn {
	w, rc, own := nonblockingWriter(w)
	c := &ndjsonConn{lr: newLineReader(r, maxLineBytes), closer: closer, rc: rc, own: own}
	c.wr = countingWriter{w: w, n: &c.sent}
	c.w = bufio.NewWriterSize(c.wr, ioBytes)
	return c
}

// newRecyclingConn is NewNDJSONConn for the agent's stdout: its lines can
// be lent (readShared) from blocks that are reused.
func newRecyclingConn(r io.Reader, w io.Writer, closer io.Closer, maxLineBytes int) *ndjsonConn {
	c := NewNDJSONConn(rawPipeReader(r), w, closer, maxLineBytes).(*ndjsonConn)
	c.lr.recycle = true
	return c
}

// sharedReader is a Conn whose lines can be lent: readShared returns the
// next message as ReadMessage does, valid only until the next readShared
// unless the caller retains blk (nil: the caller owns the message). See
// lineBlock.
type sharedReader interface {
	readShared() (msg []byte, blk *lineBlock, err error)
	// lentAt returns where msg, just lent by readShared, starts in blk
	// when its "\n" follows it there, else -1 (lineReader.lentAt).
	lentAt(msg []byte) int
}

// ReadMessage returns the next line, without its newline ([Conn]); a
// recycling conn returns a copy, since the caller owns it.
func (c *ndjsonConn) ReadMessage() ([]byte, error) {
	line, blk, err := c.lr.readShared()
	if blk != nil {
		line = bytes.Clone(line)
	}
	return line, err
}

// readShared lends the next line ([sharedReader]).
func (c *ndjsonConn) readShared() ([]byte, *lineBlock, error) { return c.lr.readShared() }

func (c *ndjsonConn) lentAt(msg []byte) int { return c.lr.lentAt(msg) }

// directBytes is the least length of a message that WriteMessages writes
// straight from its memory, when its newline follows it there, instead of
// copying it into the buffer: at this size one more write system call
// costs about what the copy does.
const directBytes = 16 << 10

// WriteMessages writes msgs, each followed by "\n", and flushes once. A
// long message whose capacity holds the "\n" right after it (joined lines
// of the agent's stdout, hostBatch) is written in one piece from there.
func (c *ndjsonConn) WriteMessages(msgs [][]byte) error {
	for _, m := range msgs {
		if n := len(m); n >= directBytes && cap(m) > n && m[:n+1][n] == '\n' {
			if err := c.w.Flush(); err != nil {
				return err
			}
			if _, err := c.wr.Write(m[:n+1]); err != nil {
				return err
			}
			continue
		}
		if _, err := c.w.Write(m); err != nil {
			return err
		}
		if err := c.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return c.w.Flush()
}

// Close closes the connection's closer (the reader's side: it ends a
// ReadMessage in progress), once ([Conn]).
func (c *ndjsonConn) Close() error {
	var err error
	c.once.Do(func() {
		if c.closer != nil {
			err = c.closer.Close()
		}
		if c.own != nil {
			c.own.Close()
		}
	})
	return err
}

// ObjectStream adapts a Conn to jsonrpc2.ObjectStream, so that the
// sourcegraph/jsonrpc2 Conn can speak over any acpmux transport (used by the
// demo host and tests). ReadObject decodes one message into v; WriteObject
// encodes obj as one message.
type ObjectStream struct {
	C  Conn
	mu sync.Mutex // guards writes
}

var _ jsonrpc2.ObjectStream = (*ObjectStream)(nil)

// WriteObject implements jsonrpc2.ObjectStream.
func (s *ObjectStream) WriteObject(obj interface{}) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.C.WriteMessages([][]byte{b})
}

// ReadObject implements jsonrpc2.ObjectStream.
func (s *ObjectStream) ReadObject(v interface{}) error {
	b, err := s.C.ReadMessage()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Close implements jsonrpc2.ObjectStream.
func (s *ObjectStream) Close() error { return s.C.Close() }
