//go:build linux

package bridge

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
)

// TestRawWriterWritesAllWaitingForRoom: a host's writer on a pipe in
// non-blocking mode writes with raw system calls (rawWriter), and still
// writes every byte in order when the pipe fills (it waits in the poller
// for the host to read), and reports the broken pipe once the host is gone.
func TestRawWriterWritesAllWaitingForRoom(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wr, rc, _ := nonblockingWriter(w)
	if _, ok := wr.(rawWriter); !ok || rc == nil {
		t.Fatalf("nonblockingWriter(os.Pipe) = %T, %v; want rawWriter and its RawConn", wr, rc)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: more than the pipe holds
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, int64(len(want))))
		got <- b
	}()
	n, err := wr.Write(want)
	if n != len(want) || err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the reader got %d bytes, not the %d written in order", len(b), len(want))
	}
	r.Close()
	if _, err := wr.Write([]byte("gone\n")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Write after the reader closed: %v, want EPIPE", err)
	}
}
