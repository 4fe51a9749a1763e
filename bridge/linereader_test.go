package bridge

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
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
