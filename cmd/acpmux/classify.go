package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"mvdan.cc/sh/v3/syntax"

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
  acpmux classify [--json] [--] [COMMAND [ARGS...]]

Classifies a shell command (Bash syntax) as read-only, write or unknown,
as plan mode sees it, and names the words and operators that decided it.

Flags end at the first word that is not a flag (or at "--"). One argument
is the command text as it is: quote it to keep pipes and redirections
('git log | head'). Several arguments are the words of one command, as
your shell passed them: "acpmux classify ls -la" classifies ls -la (a
word with spaces or shell characters is quoted again). Without a command,
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
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args) // stops at the first non-flag: "classify ls -la" is ls -la
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(s.out, classifyUsage)
		printFlags(s.out, fs)
		fmt.Fprint(s.out, classifyExamples)
		return 0
	}
	if err != nil {
		fmt.Fprintf(s.err, "acpmux classify: %s\nRun 'acpmux classify --help' for usage.\n", twoDashes(err))
		return 2
	}
	rest := fs.Args()
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
	if len(rest) > 0 {
		print(joinWords(rest))
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

// joinWords turns the command-line arguments of classify into the command
// text: one argument as it is (the user quoted a whole command), several as
// the words of one command, each quoted for Bash where it needs it, so
// that ["echo", "a b"] is the command echo 'a b'.
func joinWords(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil { // a NUL byte, which no argv can hold
			q = w
		}
		quoted[i] = q
	}
	return strings.Join(quoted, " ")
}

// parseFlagsAround parses flags before and after the one operand, so
// both "hook --plan claude" and "hook claude --plan" work. Words after
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
