package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/acpmux/acpmux/bridge"
)

func init() {
	register(command{name: "run", summary: "relay ACP between the IDE on stdio and an agent (the main job)", run: runMain,
		flags: func() *flag.FlagSet { fs, _ := runFlagSet(); return fs }})
}

const runUsage = `Usage: acpmux run [flags] -- AGENT [ARGS...]

Starts AGENT as a subprocess and relays the Agent Client Protocol between it
and the IDE that launched acpmux (on acpmux's stdin and stdout). Configure
your IDE to launch "acpmux run -- AGENT ARGS" instead of "AGENT ARGS".

stdout carries only ACP messages; logs and the agent's stderr go to stderr.
acpmux exits with the agent's exit status (128+N when signal N ended it).

Flags:
`

// runFlags are the flags of "acpmux run" shared with commands that embed
// the relay ("demo").
type runFlags struct {
	maxLineBytes int
	grace        time.Duration
	logLevel     string
	logFormat    string // logs.go
	logFile      string
	queueLen     int
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.maxLineBytes, "max-line-bytes", bridge.DefaultMaxLineBytes, "largest message accepted from the agent or a host, in bytes")
	fs.DurationVar(&f.grace, "grace", bridge.DefaultGracePeriod, "on shutdown: after the IDE's EOF, wait this long for the agent's responses to the IDE's requests; after closing the agent's stdin, wait this long before SIGTERM, and again before SIGKILL; once the agent has exited, disconnect a host that takes nothing of what is queued for it this long")
	fs.StringVar(&f.logLevel, "log-level", envOr("ACPMUX_LOG", "info"), "log level: debug, info, warn, error (env ACPMUX_LOG)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log line format: text (key=value) or json (one object per line)")
	fs.StringVar(&f.logFile, "log-file", "", "append logs to this file (created with mode 0600) instead of stderr; the agent's stderr still goes to stderr")
	fs.IntVar(&f.queueLen, "host-queue", bridge.DefaultHostQueueLen, "messages queued per remote host before it is disconnected as too slow")
}

// runFlagSet builds the flag set of "acpmux run".
func runFlagSet() (*flag.FlagSet, *relayFlags) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f := new(relayFlags)
	f.register(fs)
	registerConfigFlag(fs)
	return fs, f
}

func runMain(args []string, s stdio) int {
	fs, f := runFlagSet()
	flagArgs, argv, _ := splitDashDash(args)
	help := func(w io.Writer) {
		fmt.Fprint(w, runUsage)
		writeFlags(w, fs)
		fmt.Fprint(w, "\nExample (Zed settings.json):\n"+zedExample)
	}
	if done, code := parseArgs("run", fs, s, help, func() error { return fs.Parse(flagArgs) }); done {
		return code
	}
	if _, _, err := applyConfig("run", fs); err != nil {
		fmt.Fprintln(s.err, "acpmux run:", err)
		return 2
	}
	if err := f.validate(); err != nil {
		fmt.Fprintln(s.err, "acpmux run:", err)
		return 2
	}
	if len(argv) == 0 {
		argv = fs.Args()
	}
	if len(argv) == 0 {
		fmt.Fprintln(s.err, "acpmux run: no agent command; usage: acpmux run [flags] -- AGENT [ARGS...]")
		return 2
	}
	log, closeLog, err := f.logger(s.err)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux run:", err)
		return loggerStatus(err)
	}
	defer closeLog()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.listen == "" && f.upstream == "" && s.in == os.Stdin && os.Getenv("GOMAXPROCS") == "" {
		oneProcessor()
	}
	r, err := startRelay(f, argv, s.err, log)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux run:", err)
		var usage usageError
		switch {
		case errors.As(err, &usage):
			return 2
		case errors.Is(err, bridge.ErrAgentStart):
			return 127 // as a shell says for a command it cannot run
		}
		return 1
	}
	if f, ok := s.out.(*os.File); ok {
		bridge.GrowPipe(f) // larger writes to the IDE during bursts
	}
	in, closer := pollableStdin(s.in)
	r.bridge.AddHost(bridge.NewHost("stdio", bridge.NewNDJSONConn(in, s.out, closer, f.maxLineBytes), bridge.HostOptions{Blocking: true, QueueLen: blockingQueueLen(f.queueLen), Driver: f.headless, Kind: "stdio"}))
	return r.run(ctx)
}

// oneProcessor runs Go code on one processor (GOMAXPROCS 1) for the rest
// of the process: what acpmux run does when it serves no host but the IDE
// on its stdio (no --listen, and no --upstream, which streams the agent's
// updates to a lead over WebSocket as well), GOMAXPROCS is not set in its
// environment and it runs as a process of its own (its stdin is the
// process's, not a test's). Its work is then one chain, the agent's stdout
// read, parsed and written to the IDE on one goroutine: a second processor
// only had an idle thread woken by each write of the agent into the pipe
// (the runtime's poller watches it) and for each goroutine that became
// ready, about 17% of acpmux's CPU in a flood (docs/performance.md). The
// agent and the IDE are processes of their own, on every processor; with
// --listen, WebSocket hosts are written in parallel, and the default
// stays.
func oneProcessor() { runtime.GOMAXPROCS(1) }

const zedExample = `  "agent_servers": {
    "Claude via acpmux": {
      "type": "custom",
      "command": "acpmux",
      "args": ["run", "--", "npx", "@agentclientprotocol/claude-agent-acp"]
    }
  }
`

// pollableStdin returns stdin in a form whose Close unblocks a pending
// Read: a pipe or socket on fd 0 is put in non-blocking mode so Go's poller
// serves it. Other readers are returned as they are.
func pollableStdin(in io.Reader) (io.Reader, io.Closer) {
	f, ok := in.(*os.File)
	if !ok || f != os.Stdin {
		if c, ok := in.(io.Closer); ok {
			return in, c
		}
		return in, nil
	}
	if err := syscall.SetNonblock(int(f.Fd()), true); err != nil {
		return f, nil
	}
	nf := os.NewFile(f.Fd(), "stdin")
	return nf, nf
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
