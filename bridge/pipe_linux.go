//go:build linux

package bridge

import (
	"os"
	"syscall"
)

// pipeBytes is the pipe capacity acpmux asks for on the pipes it reads
// and writes ACP through: 1 MiB instead of Linux's 64 KiB default, so a
// burst of notifications reaches the reader in fewer, larger reads.
const pipeBytes = 1 << 20

// growPipe enlarges the pipe under f when f is a pipe; a refusal (the
// system limit /proc/sys/fs/pipe-max-size, or not a pipe) is ignored.
func growPipe(f *os.File) {
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeBytes)
		})
	}
}

// GrowPipe enlarges the pipe under f (acpmux's own stdin or stdout when a
// host launched it with pipes). See growPipe.
func GrowPipe(f *os.File) { growPipe(f) }
