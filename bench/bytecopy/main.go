// Command bytecopy is the floor of any relay process, for benchmarks: it
// starts the agent command given as its arguments with pipes of its own and
// copies bytes both ways (its stdin to the agent's stdin, the agent's stdout
// to its stdout) with 1 MiB buffers, enlarging the pipes as acpmux does. It
// parses nothing and exits with the agent.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bytecopy AGENT [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	childIn, toAgent, _ := os.Pipe()
	fromAgent, childOut, _ := os.Pipe()
	for _, f := range []*os.File{toAgent, fromAgent, os.Stdout} {
		growPipe(f)
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "bytecopy:", err)
		os.Exit(127)
	}
	childIn.Close()
	childOut.Close()
	go func() { copyAll(toAgent, os.Stdin); toAgent.Close() }()
	copyAll(os.Stdout, fromAgent)
	cmd.Wait()
	os.Exit(cmd.ProcessState.ExitCode())
}

// copyAll copies src to dst with plain reads and writes (no splice).
func copyAll(dst, src *os.File) {
	buf := make([]byte, 1<<20)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func growPipe(f *os.File) {
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, 1<<20) })
	}
}
