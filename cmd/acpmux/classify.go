package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/acpmux/acpmux/classify"
)

func init() {
	register(command{
		name:    "classify",
		summary: "classify shell commands as read-only, write or unknown, and say why",
		run:     classifyMain,
	})
}

const classifyUsage = `Usage:
  acpmux classify [--json] [COMMAND]

Classifies a shell command (Bash syntax) as read-only, write or unknown,
as plan mode sees it, and names the words and operators that decided it.

With COMMAND (one argument; quote it), classifies that command. Without,
reads one command per line from stdin and prints one line per input line
(an empty line is an unknown, empty command).

  read-only  provably only prints: runs in plan mode without asking
  write      changes files, processes, repository or network state:
             plan mode blocks it
  unknown    neither can be proven: plan mode asks once for this exact
             command

Text output, one line per command:
  CLASS<TAB>COMMAND<TAB>"WORD" (POS-END): WHY; ...
COMMAND is quoted when it holds a tab or newline. POS and END are byte
offsets into the command.

JSON output (--json), one object per line:
  {"command": "rm -rf x", "class": "write", "reasons": [{"pos": 0, "end": 2,
   "class": "write", "text": "rm", "why": "rm removes files"}]}

Exit status: 0 whatever the class; 1 if stdin cannot be read; 2 usage error.

Flags:
`

const classifyExamples = `
Examples:
  acpmux classify 'git log --oneline | head'
  acpmux classify --json 'sort -o out.txt in.txt'
  history | cut -c8- | acpmux classify
`

type classifyLine struct {
	Command string            `json:"command"`
	Class   classify.Class    `json:"class"`
	Reasons []classify.Reason `json:"reasons"`
}

func classifyMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("classify", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object per command")
	rest, err := parseFlagsAround(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(s.out, classifyUsage)
		printFlags(s.out, fs)
		fmt.Fprint(s.out, classifyExamples)
		return 0
	}
	if err != nil {
		fmt.Fprintf(s.err, "acpmux classify: %v\nRun 'acpmux classify --help' for usage.\n", err)
		return 2
	}
	if len(rest) > 1 {
		fmt.Fprintf(s.err, "acpmux classify: got %d arguments; pass the command as one quoted argument, e.g. acpmux classify 'git status'\n", len(rest))
		return 2
	}
	w := bufio.NewWriter(s.out)
	defer w.Flush()
	print := func(cmd string) {
		v := classify.Command(cmd)
		if *asJSON {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			enc.Encode(classifyLine{Command: cmd, Class: v.Class, Reasons: v.Reasons})
			return
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", v.Class, safe(cmd), reasonsText(v.Reasons))
	}
	if len(rest) == 1 {
		print(rest[0])
		return 0
	}
	r := bufio.NewReader(s.in)
	for {
		line, err := r.ReadString('\n')
		if line != "" || err == nil {
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
			print(line)
			w.Flush()
		}
		if err == io.EOF {
			return 0
		}
		if err != nil {
			w.Flush()
			fmt.Fprintf(s.err, "acpmux classify: read stdin: %v\n", err)
			return 1
		}
	}
}

// parseFlagsAround parses flags before and after the one operand, so
// both "classify --json CMD" and "classify CMD --json" work. Words after
// "--" are operands.
// The flag package's own messages are discarded: callers print one
// clear line instead.
func parseFlagsAround(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	rest := fs.Args()
	if len(rest) == 0 || (len(args) > len(rest) && args[len(args)-len(rest)-1] == "--") {
		return rest, nil
	}
	first := rest[0]
	if err := fs.Parse(rest[1:]); err != nil {
		return nil, err
	}
	return append([]string{first}, fs.Args()...), nil
}

// printFlags lists the flags of fs as --name, the way the help texts
// spell them.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		fmt.Fprintf(w, "  --%-10s %s\n", f.Name, f.Usage)
	})
}

func reasonsText(rs []classify.Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}
