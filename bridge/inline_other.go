//go:build !linux

package bridge

import (
	"io"
	"syscall"
)

// nonblockingWriter returns w: writes are never tried inline outside
// Linux.
func nonblockingWriter(w io.Writer) (io.Writer, syscall.RawConn, io.Closer) { return w, nil, nil }

// writevNow is never called outside Linux (nonblockingWriter returns no
// RawConn).
func writevNow(syscall.RawConn, []syscall.Iovec) (int, error) { return 0, syscall.ENOTSUP }

func iovec(b []byte) syscall.Iovec { return syscall.Iovec{} }

// rawPipeReader returns r outside Linux.
func rawPipeReader(r io.Reader) io.Reader { return r }
