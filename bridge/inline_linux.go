//go:build linux

package bridge

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// nonblockingWriter returns the writer a host's NDJSON conn writes w
// through and, when writes to it can also be tried without blocking (a
// pipe), its raw connection for writeNow; the writer is then a rawWriter
// on that connection. w is returned unchanged with a nil RawConn for
// anything else.
//
// A pipe whose file is already in non-blocking mode (os.Pipe) is used as
// it is. acpmux's own stdout, when the IDE launched it with a pipe, is
// opened again through /proc/self/fd/1: a file description of its own,
// in non-blocking mode, so that os.Stdout and whatever else shares the
// pipe's description keep blocking writes. Its closer is returned to be
// closed with the conn.
func nonblockingWriter(w io.Writer) (io.Writer, syscall.RawConn, io.Closer) {
	f, ok := w.(*os.File)
	if !ok {
		return w, nil, nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return w, nil, nil
	}
	if nonblocking(f) {
		if rc, err := f.SyscallConn(); err == nil {
			return rawWriter{rc}, rc, nil
		}
		return w, nil, nil
	}
	if f != os.Stdout {
		return w, nil, nil
	}
	nf, err := os.OpenFile("/proc/self/fd/1", os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return w, nil, nil
	}
	if fi2, err := nf.Stat(); err != nil || !os.SameFile(fi, fi2) {
		nf.Close()
		return w, nil, nil
	}
	rc, err := nf.SyscallConn()
	if err != nil {
		nf.Close()
		return w, nil, nil
	}
	return rawWriter{rc}, rc, nf
}

// nonblocking reports whether f's file description is in non-blocking
// mode.
func nonblocking(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var fl uintptr
	var errno syscall.Errno
	if rc.Control(func(fd uintptr) {
		fl, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	}) != nil || errno != 0 {
		return false
	}
	return fl&syscall.O_NONBLOCK != 0
}

// writevNow writes iov with one writev system call on rc's file, which is
// in non-blocking mode, and returns how many bytes it took: fewer than
// all (0 included) when the pipe is full. EAGAIN is not an error.
func writevNow(rc syscall.RawConn, iov []syscall.Iovec) (int, error) {
	var n uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			// Raw: a write in non-blocking mode never waits, so the
			// scheduler need not hand the P to another thread meanwhile
			// (see rawReader).
			n, _, errno = syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
			if errno != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return 0, err
	}
	switch errno {
	case 0:
		return int(n), nil
	case syscall.EAGAIN:
		return 0, nil
	}
	return 0, errno
}

// iovec returns an Iovec over b (not empty).
func iovec(b []byte) syscall.Iovec {
	v := syscall.Iovec{Base: &b[0]}
	v.SetLen(len(b))
	return v
}

// rawReader reads a pipe in non-blocking mode (the agent's stdout, from
// os.Pipe) as os.File does, waiting in the runtime's poller when it is
// empty, but with raw read system calls: a read that cannot block is not
// announced to the scheduler, whose monitor would otherwise hand the
// reader's P to another thread during a long copy (a wakeup, and a
// context switch when the read returns) many times a flood.
type rawReader struct{ rc syscall.RawConn }

// rawPipeReader returns a rawReader of r when r is a pipe in non-blocking
// mode, else r.
func rawPipeReader(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok || !nonblocking(f) {
		return r
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return r
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return r
	}
	return rawReader{rc}
}

// Read reads into p once, waiting until the pipe has bytes or is closed
// (io.EOF).
func (r rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	if err := r.rc.Read(func(fd uintptr) bool {
		n, errno = rawRead(fd, p)
		return errno != syscall.EAGAIN
	}); err != nil {
		return 0, err
	}
	return readResult(n, errno)
}

// readNow reads into p once without waiting (nowReader): 0 and a nil
// error when the pipe is empty.
func (r rawReader) readNow(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	if err := r.rc.Control(func(fd uintptr) { n, errno = rawRead(fd, p) }); err != nil {
		return 0, err
	}
	if errno == syscall.EAGAIN {
		return 0, nil
	}
	return readResult(n, errno)
}

// rawRead is one read system call of fd into p (not empty), again after
// EINTR.
func rawRead(fd uintptr, p []byte) (uintptr, syscall.Errno) {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno != syscall.EINTR {
			return n, errno
		}
	}
}

// readResult is what a read returns for rawRead's n and errno (not
// EAGAIN): the count, io.EOF at the end of the pipe, or the error.
func readResult(n uintptr, errno syscall.Errno) (int, error) {
	switch {
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: "pipe", Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

// rawWriter writes to a pipe in non-blocking mode (rc's file) as os.File
// does, waiting in the runtime's poller while the pipe is full, but with
// raw write system calls, for the reason rawReader reads with raw ones: a
// write that cannot block is not announced to the scheduler, whose
// monitor would otherwise hand the writer's P to another thread during a
// long copy into the pipe.
type rawWriter struct{ rc syscall.RawConn }

// Write writes all of p, or returns the error that stopped it.
func (w rawWriter) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		var n uintptr
		var errno syscall.Errno
		err := w.rc.Write(func(fd uintptr) bool {
			for {
				n, _, errno = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
				if errno != syscall.EINTR {
					return errno != syscall.EAGAIN
				}
			}
		})
		switch {
		case err != nil:
			return done, err
		case errno != 0:
			return done, &os.PathError{Op: "write", Path: "pipe", Err: errno}
		}
		done += int(n)
	}
	return done, nil
}
