// Command acpmux sits between one ACP agent and many hosts: an IDE over
// stdio, remote hosts over WebSocket, scripts over stream-json, and a
// durable decisions API. See README.md and docs/.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
)

// stdio is the standard streams a command uses; tests pass their own.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// command is one subcommand. run returns the process exit status.
type command struct {
	name    string
	summary string
	hidden  bool
	run     func(args []string, s stdio) int
	// flags, when set, builds the command's flag set (unparsed): its flags
	// can then be set in the configuration file's table of the command's
	// name (config.go).
	flags func() *flag.FlagSet
}

var commands = map[string]command{}

// register adds a subcommand; each command's file calls it from init.
func register(c command) { commands[c.name] = c }

func main() {
	// ACPMUX_CPUPROFILE=FILE writes a CPU profile of the whole run (go tool
	// pprof), for performance work; see bench/README.md.
	if p := os.Getenv("ACPMUX_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil {
			pprof.StartCPUProfile(f)
			code := Main(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
	}
	// ACPMUX_MEMPROFILE=FILE writes the allocations profile of the whole
	// run when it ends (go tool pprof -sample_index=alloc_space).
	if p := os.Getenv("ACPMUX_MEMPROFILE"); p != "" {
		code := Main(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})
		if f, err := os.Create(p); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		os.Exit(code)
	}
	os.Exit(Main(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr}))
}

// Main runs acpmux with args (without the program name) and returns the exit
// status: 0 success, 2 usage error, otherwise the command's own status.
func Main(args []string, s stdio) int {
	if len(args) == 0 {
		usage(s.err)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(s.out)
		return 0
	case "help":
		return helpMain(args[1:], s)
	case "-version", "--version":
		return versionMain(nil, s)
	}
	if isStreamJSONFlag(args[0]) {
		// An SDK started acpmux as its CLI (pathToClaudeCodeExecutable,
		// pathToQwenExecutable): the agent comes from ACPMUX_AGENT.
		return streamJSONMain(args, s)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(s.err, "acpmux: unknown command %q\nRun 'acpmux --help' for usage.\n", args[0])
		return 2
	}
	return c.run(args[1:], s)
}

func usage(w io.Writer) {
	fmt.Fprint(w, `acpmux - one ACP agent, many hosts: relay, confirmations, plan-mode gate

Usage:
  acpmux <command> [flags] [-- AGENT [ARGS...]]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run 'acpmux help <command>' (or 'acpmux <command> --help') for the flags
of one command.
Logs go to stderr; in 'run' mode stdout carries only ACP messages.
Documentation: docs/ in the source tree (docs/README.md is the index).
`)
}

// helpMain runs "acpmux help [COMMAND]": the command list, or COMMAND's
// own --help text (status 0). An unknown or hidden command, or more than
// one, is a usage error (status 2).
func helpMain(args []string, s stdio) int {
	if len(args) == 0 {
		usage(s.out)
		return 0
	}
	c, ok := commands[args[0]]
	if len(args) > 1 || !ok || c.hidden {
		if len(args) > 1 {
			fmt.Fprintln(s.err, "acpmux help: want at most one command; usage: acpmux help [COMMAND]")
		} else {
			fmt.Fprintf(s.err, "acpmux help: unknown command %q\nRun 'acpmux --help' for the commands.\n", args[0])
		}
		return 2
	}
	return c.run([]string{"--help"}, s)
}

// isStreamJSONFlag reports whether arg is the first flag the Claude Agent
// SDK or the Qwen Code SDK passes to its CLI (--output-format or
// --input-format), so that acpmux runs stream-json.
func isStreamJSONFlag(arg string) bool {
	name, _, _ := strings.Cut(arg, "=")
	return name == "--output-format" || name == "--input-format"
}

// splitDashDash splits args at the first "--": flags before, agent argv after.
func splitDashDash(args []string) (flags, argv []string, found bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}
