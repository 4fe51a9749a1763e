package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Agent is the ACP agent subprocess. It runs in its own process group so
// that shutdown reaches every process it started (shell wrappers included).
type Agent struct {
	cmd    *exec.Cmd
	stdout *os.File // read end of the agent's stdout
	conn   Conn

	waitOnce sync.Once
	exited   chan struct{} // closed when the process has been reaped
	state    *os.ProcessState
	waitErr  error
}

// AgentOptions configure StartAgent.
type AgentOptions struct {
	// Argv is the agent command and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Dir is the working directory; "" is acpmux's own.
	Dir string
	// Env is the environment; nil inherits acpmux's.
	Env []string
	// Stderr receives the agent's stderr unchanged; nil discards it.
	Stderr io.Writer
	// MaxLineBytes caps one message read from the agent's stdout
	// (DefaultMaxLineBytes when 0).
	MaxLineBytes int
}

// ErrAgentStart wraps every error of StartAgent that concerns the agent
// command itself (not found, not executable, no argv).
var ErrAgentStart = errors.New("start agent")

// StartAgent starts the agent process with pipes on stdin and stdout. The
// error says which command could not be started and why.
func StartAgent(opts AgentOptions) (*Agent, error) {
	if len(opts.Argv) == 0 {
		return nil, fmt.Errorf("%w: no agent command given", ErrAgentStart)
	}
	cmd := exec.Command(opts.Argv[0], opts.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stderr = opts.Dir, opts.Env, opts.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Pipes of our own, not StdoutPipe: exec.Cmd.Wait closes those as soon
	// as the process exits, which would lose output still in the pipe.
	childIn, stdin, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		stdin.Close()
		return nil, fmt.Errorf("start agent: %w", err)
	}
	GrowPipe(stdout)
	GrowPipe(stdin)
	cmd.Stdin, cmd.Stdout = childIn, childOut
	err = cmd.Start()
	childIn.Close()
	childOut.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, fmt.Errorf("%w %q: %w%s", ErrAgentStart, opts.Argv[0], err, startHint(err))
	}
	a := &Agent{cmd: cmd, stdout: stdout, exited: make(chan struct{})}
	a.conn = newRecyclingConn(stdout, stdin, stdin, opts.MaxLineBytes)
	return a, nil
}

// lineBuffered reports whether a whole line of the agent's stdout is read
// but not yet returned, so that the next read returns without waiting for
// the agent. Bytes of a line still arriving do not count: the reader
// hands over what is pending before it waits for the rest.
func (a *Agent) lineBuffered() bool {
	lr := a.lines()
	return lr != nil && lr.lineBuffered()
}

// fillNow reads, without waiting, what the agent's stdout holds, and
// reports whether a whole line is now buffered (lineReader.fillNow).
func (a *Agent) fillNow() bool {
	lr := a.lines()
	return lr != nil && lr.fillNow()
}

// lines returns the line reader of the agent's stdout, under a recording
// tap too (which still records each line as it is read); nil for a conn
// of another kind.
func (a *Agent) lines() *lineReader {
	c := a.conn
	if t, ok := c.(*tapConn); ok {
		c = t.Conn
	}
	if c, ok := c.(*ndjsonConn); ok {
		return c.lr
	}
	return nil
}

// closeStdout unblocks a read of the agent's stdout that waits for output
// the agent's descendants keep the pipe open for.
func (a *Agent) closeStdout() { a.stdout.Close() }

// Pid returns the agent's process id (also its process group id).
func (a *Agent) Pid() int { return a.cmd.Process.Pid }

// CloseStdin closes the agent's stdin: the ACP signal that the client left.
func (a *Agent) CloseStdin() { a.conn.Close() }

// Signal sends sig to the agent's whole process group.
func (a *Agent) Signal(sig syscall.Signal) {
	_ = syscall.Kill(-a.cmd.Process.Pid, sig)
}

// wait reaps the process once; later calls return at once.
func (a *Agent) wait() {
	a.waitOnce.Do(func() {
		a.waitErr = a.cmd.Wait()
		a.state = a.cmd.ProcessState
		close(a.exited)
	})
}

// Exited is closed once the process has been reaped (after Bridge.Run has
// seen the agent's stdout close).
func (a *Agent) Exited() <-chan struct{} { return a.exited }

// Stop ends the agent: it waits grace for the process to exit by itself
// (the caller has closed or is closing its stdin), or less if ctx ends
// first, then closes stdin and sends SIGTERM to the process group, then
// after another grace SIGKILL. It returns when the process has been reaped
// (wait runs elsewhere).
func (a *Agent) Stop(ctx context.Context, grace time.Duration) {
	select {
	case <-a.exited:
		return
	case <-time.After(grace):
	case <-ctx.Done():
	}
	a.terminate(grace)
}

// terminate closes stdin and sends SIGTERM to the process group, then
// SIGKILL if it has not exited after grace. It returns once it is reaped.
func (a *Agent) terminate(grace time.Duration) {
	a.CloseStdin()
	a.Signal(syscall.SIGTERM)
	select {
	case <-a.exited:
		return
	case <-time.After(grace):
		a.Signal(syscall.SIGKILL)
	}
	<-a.exited
}

// exitSignal names the signal that ended the agent ("terminated",
// "killed"), or "" when it exited by itself or has not exited.
func (a *Agent) exitSignal() string {
	if a.state == nil {
		return ""
	}
	if ws, ok := a.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}

// ExitCode returns the agent's exit status once it has exited: its code, or
// 128+signal when a signal ended it, as a shell reports it.
func (a *Agent) ExitCode() int {
	if a.state == nil {
		return 1
	}
	if ws, ok := a.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return a.state.ExitCode()
}

// startHint says what to do about err, StartAgent's failure to start the
// command: "" when the error says it already (not found in PATH).
func startHint(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return ""
	case errors.Is(err, fs.ErrNotExist):
		return " (no such file: check the agent command's path after --)"
	case errors.Is(err, fs.ErrPermission):
		return " (not executable: check its mode, e.g. chmod +x)"
	}
	return ""
}
