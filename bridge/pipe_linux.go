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

// GrowPipe enlarges the pipe under f (the agent's pipes; acpmux's own
// stdout when a host launched it with a pipe) to pipeBytes. A refusal (the
// system limit /proc/sys/fs/pipe-max-size) or a file that is not a pipe is
// ignored: the default capacity stays.
func GrowPipe(f *os.File) {
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, pipeBytes)
		})
	}
}
