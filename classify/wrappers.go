package classify

import (
	"strings"
)

// Wrappers run another command. The wrapped command is classified as if
// it stood alone, so a write stays a write behind any number of them;
// wrappers that change who runs it, or keep it running, add Unknown.

var (
	timeoutOpts = parseOpts(`-s: --signal: -k: --kill-after: --foreground --preserve-status -v --verbose --help --version`)
	niceOpts    = parseOpts(`-n: --adjustment: -NUM --help --version`)
	stdbufOpts  = parseOpts(`-i: --input: -o: --output: -e: --error: --help --version`)
	timeOpts    = parseOpts(`-o:!w --output:!w -a --append -f: --format: -p --portability -q --quiet -v --verbose -V --version --help`)
	envOpts     = parseOpts(`-i --ignore-environment -0 --null -u: --unset: -C: --chdir: -S:!u --split-string:!u
		-v --debug --block-signal:: --default-signal:: --ignore-signal:: --list-signal-handling --help --version`)
	sudoOpts = parseOpts(`-A --askpass -b!u --background!u -C: --close-from: -D: --chdir: -E --preserve-env::
		-e!w --edit!w -g: --group: -H --set-home -h:: --host:: -i --login -K --remove-timestamp -k --reset-timestamp
		-l --list -n --non-interactive -P --preserve-groups -p: --prompt: -R: --chroot: -r: --role: -S --stdin
		-s --shell -t: --type: -T: --command-timeout: -U: --other-user: -u: --user: -V --version -v --validate
		-B --bell --help`)
	doasOpts  = parseOpts(`-n -s -u: -C:`)
	flockOpts = parseOpts(`-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -w: --timeout: -E:
		--conflict-exit-code: -o --close -c: --command: -F --no-fork --verbose -h --help -V --version`)
	watchOpts = parseOpts(`-b --beep -c --color -C --no-color -d:: --differences:: -e --errexit -g --chgexit
		-n: --interval: -p --precise -t --no-title -w --no-wrap -x --exec -q: --equexit: -r --no-rerun
		-h --help -v --version`)
	scriptOpts = parseOpts(`-a --append -c: --command: -e --return -f --flush -E: --echo: -q --quiet
		-t:: --timing:: -T: --log-timing: -I: --log-in: -O: --log-out: -B: --log-io: -m: --logging-format:
		-o: --output-limit: -h --help -V --version`)
	xargsOpts = parseOpts(`-0 --null -a: --arg-file: -d: --delimiter: -E: -e:: --eof:: -I: --replace:: -i::
		-L: --max-lines: -l:: -n: --max-args: -P: --max-procs: -p --interactive -r --no-run-if-empty
		-s: --max-chars: -t --verbose -x --exit --process-slot-var: -o --open-tty --show-limits --help --version`)
)

// wrapped scans a wrapper's options (stopping at the first operand) and
// returns the operands: the wrapped command and its arguments, possibly
// after operands of the wrapper's own.
func (c *classifier) wrapped(t *optTable, x *cmd, notes map[string]string) ([]arg, []item) {
	g := getopt{t: t, args: x.args, stop: true}
	var ops []arg
	var opts []item
	for it := range g.all() {
		switch {
		case it.bad != "":
			c.argAt(Unknown, it.at, it.bad)
			return nil, nil
		case it.opt == nil:
			ops = append(ops, it.val)
			ops = append(ops, g.args[g.i:]...)
			return ops, opts
		case it.opt.class != ReadOnly:
			why := notes[it.opt.name]
			if why == "" {
				why = "option " + it.opt.name + " writes files or runs a program"
			}
			c.argAt(it.opt.class, it.at, why)
		}
		opts = append(opts, it)
	}
	return ops, opts
}

// runWrapped classifies the wrapped command ops, or records that the
// wrapper alone only prints (alone).
func (c *classifier) runWrapped(mark int, x *cmd, ops []arg, alone string) {
	if len(ops) == 0 {
		c.finishArg(mark, x.at, alone)
		return
	}
	c.exec(ops)
	c.finishArg(mark, x.at, x.name+" runs the command that follows")
}

func timeoutCmd(c *classifier, x *cmd) {
	mark := c.mark()
	ops, _ := c.wrapped(timeoutOpts, x, nil)
	if c.raised(mark) {
		return
	}
	if len(ops) < 2 {
		c.argAt(Unknown, x.span(), "timeout without a duration and a command")
		return
	}
	c.runWrapped(mark, x, ops[1:], "")
}

func simpleWrapper(t *optTable, alone string) handler {
	return func(c *classifier, x *cmd) {
		mark := c.mark()
		ops, _ := c.wrapped(t, x, map[string]string{"-o": "time -o writes its report to a file", "--output": "time --output writes its report to a file"})
		if c.raised(mark) {
			return
		}
		if alone == "" && len(ops) == 0 {
			c.argAt(Unknown, x.span(), x.name+" without a command")
			return
		}
		c.runWrapped(mark, x, ops, alone)
	}
}

func nohupCmd(c *classifier, x *cmd) {
	c.argAt(Unknown, x.at, "nohup keeps the command running after the session (and may write nohup.out)")
	if len(x.args) > 0 && !x.args[0].is("--") {
		c.exec(x.args)
	} else if len(x.args) > 1 {
		c.exec(x.args[1:])
	}
}

func envCmd(c *classifier, x *cmd) {
	mark := c.mark()
	ops, opts := c.wrapped(envOpts, x, map[string]string{"-S": "env -S splits a string into a command", "--split-string": "env --split-string splits a string into a command"})
	if c.raised(mark) {
		return
	}
	for _, it := range opts {
		if it.opt.name == "-C" || it.opt.name == "--chdir" {
			c.res.cd = true
		}
	}
	for len(ops) > 0 {
		name, _, ok := strings.Cut(ops[0].text, "=")
		if !ok || name == "" || ops[0].multi {
			break
		}
		if !isName(name) || !safeVarName(name) {
			c.argAt(Unknown, ops[0], "setting "+name+" can change what the program runs or reads")
		}
		ops = ops[1:]
	}
	c.runWrapped(mark, x, ops, "env prints the environment")
}

func sudoCmd(c *classifier, x *cmd) {
	c.argAt(Unknown, x.at, x.name+" runs the command as another user")
	t := sudoOpts
	if x.name == "doas" {
		t = doasOpts
	}
	ops, opts := c.wrapped(t, x, map[string]string{"-e": "sudo -e edits files", "--edit": "sudo --edit edits files"})
	for _, it := range opts {
		if it.opt.name == "-D" || it.opt.name == "--chdir" {
			c.res.cd = true
		}
	}
	if len(ops) > 0 {
		c.exec(ops)
	}
}

func flockCmd(c *classifier, x *cmd) {
	ops, opts := c.wrapped(flockOpts, x, nil)
	if len(ops) == 0 {
		c.argAt(Unknown, x.span(), "flock without a lock file")
		return
	}
	if !ops[0].static || !isDigits(ops[0].text) {
		c.argAt(Write, ops[0], "flock creates the lock file")
	}
	for _, it := range opts {
		if (it.opt.name == "-c" || it.opt.name == "--command") && it.hasVal {
			c.script(it.val, "flock -c runs a shell command")
		}
	}
	if len(ops) > 1 {
		c.exec(ops[1:])
	}
}

func watchCmd(c *classifier, x *cmd) {
	c.argAt(Unknown, x.at, "watch runs the command repeatedly until stopped")
	ops, opts := c.wrapped(watchOpts, x, nil)
	if len(ops) == 0 {
		return
	}
	for _, it := range opts {
		if it.opt.name == "-x" || it.opt.name == "--exec" {
			c.exec(ops)
			return
		}
	}
	c.joined(ops, "watch passes its arguments to sh -c")
}

func scriptCmd(c *classifier, x *cmd) {
	c.argAt(Unknown, x.at, "script records a session through a terminal")
	var ops []arg
	for it := range c.options(getopt{t: scriptOpts, args: x.args}, &ops) {
		switch {
		case (it.opt.name == "-c" || it.opt.name == "--command") && it.hasVal:
			c.script(it.val, "script -c runs a shell command")
		case it.opt.name == "-B" || it.opt.name == "-I" || it.opt.name == "-O" || it.opt.name == "-T" ||
			strings.HasPrefix(it.opt.name, "--log") || ((it.opt.name == "-t" || it.opt.name == "--timing") && it.hasVal):
			if !it.val.is("/dev/null") {
				c.argAt(Write, it.at, "script writes a log file")
			}
		}
	}
	if len(ops) == 0 {
		c.argAt(Write, x.at, "script writes ./typescript")
	}
	for _, a := range ops {
		if !a.is("/dev/null") {
			c.argAt(Write, a, "script writes the session to this file")
		}
	}
}

// xargsCmd classifies the command xargs runs, with the words it reads
// from its input appended: those words may be anything, options too.
func xargsCmd(c *classifier, x *cmd) {
	mark := c.mark()
	ops, opts := c.wrapped(xargsOpts, x, nil)
	if c.raised(mark) {
		return
	}
	repl := ""
	for _, it := range opts {
		switch it.opt.name {
		case "--process-slot-var":
			// Sets any variable for the command: BASH_ENV or PATH
			// then run what a file in the directory says.
			c.argAt(Unknown, it.at, "xargs --process-slot-var sets a variable of the command's environment")
		case "-I", "--replace", "-i":
			repl = "{}"
			if it.hasVal {
				if !it.val.static {
					c.argAt(Unknown, it.at, "replacement string decided at run time")
					return
				}
				repl = it.val.text
			}
		}
	}
	if len(ops) == 0 {
		ops = []arg{{text: "echo", static: true, pos: x.at.pos, end: x.at.end}}
	}
	input := arg{multi: true, free: true, pos: x.at.pos, end: x.at.end}
	args := append([]arg(nil), ops...)
	if repl != "" {
		for i := 1; i < len(args); i++ {
			if args[i].static && strings.Contains(args[i].text, repl) {
				pre, _, _ := strings.Cut(args[i].text, repl)
				args[i] = arg{text: pre, pos: args[i].pos, end: args[i].end}
			}
		}
	} else {
		args = append(args, input)
	}
	c.exec(args)
	c.finishArg(mark, x.at, "xargs runs the command with words from its input")
}

// shellOpts are the single-letter options of sh and bash that take no
// value and start no interactive session.
const shellFlags = "abefhkmnptuvxBCEHPTlr"

// shellCmd classifies sh -c SCRIPT (and bash, dash) by parsing SCRIPT.
// Other shells have other syntax: their scripts are at least Unknown.
func shellCmd(c *classifier, x *cmd) {
	bashLike := x.name == "sh" || x.name == "bash" || x.name == "dash"
	if !bashLike {
		c.argAt(Unknown, x.at, x.name+" has its own syntax; its script is parsed as Bash only to find writes")
	}
	hasC, i := false, 0
	for ; i < len(x.args); i++ {
		a := x.args[i]
		if !a.static {
			if a.mayBeOption() {
				c.argAt(Unknown, a, "argument decided at run time may be an option")
				return
			}
			break
		}
		s := a.text
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			switch s {
			case "--login", "--noprofile", "--norc", "--posix", "--verbose", "--restricted", "--noediting":
				continue
			case "--version", "--help":
				c.finishArg(c.mark(), x.at, x.name+" prints its version or help")
				return
			}
			c.argAt(Unknown, a, "shell option "+s+" is not in the table of known options")
			return
		}
		if len(s) < 2 || s[0] != '-' && s[0] != '+' {
			break
		}
		for _, l := range s[1:] {
			switch {
			case l == 'c':
				hasC = true
			case l == 'o' || l == 'O':
				i++ // the option name
			case l == 'i':
				c.argAt(Unknown, a, "an interactive shell reads startup files and input")
				return
			case l == 's':
				c.argAt(Unknown, a, "the shell reads commands from stdin")
				return
			case !strings.ContainsRune(shellFlags, l):
				c.argAt(Unknown, a, "shell option -"+string(l)+" is not in the table of known options")
				return
			}
		}
	}
	ops := x.args[min(i, len(x.args)):]
	switch {
	case !hasC && len(ops) == 0:
		c.argAt(Unknown, x.at, x.name+" reads commands from stdin")
	case !hasC:
		c.argAt(Unknown, ops[0], x.name+" runs a script file")
	case len(ops) == 0:
		c.argAt(Unknown, x.span(), x.name+" -c without a script")
	case x.name == "sh" || x.name == "dash":
		if !ops[0].static {
			c.argAt(Unknown, ops[0], x.name+" -c runs this script, which is decided at run time")
			return
		}
		c.nestedPOSIX(ops[0].text, ops[0])
	default:
		c.script(ops[0], x.name+" -c runs this script")
	}
}

// script classifies the static word a as a shell script.
func (c *classifier) script(a arg, what string) {
	if !a.static {
		c.argAt(Unknown, a, what+", which is decided at run time")
		return
	}
	c.nested(a.text, a)
}

// joined classifies words joined with spaces as a script, as eval and
// watch do.
func (c *classifier) joined(args []arg, what string) {
	if len(args) == 0 {
		return
	}
	parts := make([]string, len(args))
	for i, a := range args {
		if !a.static {
			c.argAt(Unknown, a, what+"; this word is decided at run time")
			return
		}
		parts[i] = a.text
	}
	if len(args) == 1 {
		c.nested(parts[0], args[0])
		return
	}
	span := args[0]
	span.w, span.end = nil, args[len(args)-1].end
	c.nested(strings.Join(parts, " "), span)
}

func evalCmd(c *classifier, x *cmd) {
	if len(x.args) == 0 {
		c.argAt(ReadOnly, x.at, "eval with no arguments does nothing")
		return
	}
	args := x.args
	if args[0].is("--") {
		args = args[1:]
	}
	c.argAt(Unknown, x.at, "eval runs its arguments as code")
	c.joined(args, "eval runs its arguments as a script")
}

func commandCmd(c *classifier, x *cmd) {
	mark := c.mark()
	args := x.args
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].text, "-") && args[0].text != "-" {
		s := args[0].text
		args = args[1:]
		if s == "--" {
			break
		}
		for _, l := range s[1:] {
			switch l {
			case 'p':
			case 'v', 'V':
				c.finishArg(mark, x.at, "command -v prints how a name resolves")
				return
			default:
				c.argAt(Unknown, x.at, "command option -"+string(l)+" is not known")
				return
			}
		}
	}
	if len(args) > 0 && !args[0].static && args[0].mayBeOption() {
		c.argAt(Unknown, args[0], "argument decided at run time may be an option")
		return
	}
	c.runWrapped(mark, x, args, "command with no arguments does nothing")
}

// builtinCmd runs a shell builtin by name, skipping functions.
func builtinCmd(c *classifier, x *cmd) {
	if len(x.args) == 0 {
		c.argAt(ReadOnly, x.at, "builtin with no arguments does nothing")
		return
	}
	if !x.args[0].static || !builtins[x.args[0].text] {
		c.argAt(Unknown, x.args[0], "not a shell builtin")
		return
	}
	c.exec(x.args)
}

func execCmd(c *classifier, x *cmd) {
	mark := c.mark()
	args := x.args
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].text, "-") && args[0].text != "-" {
		s := args[0].text
		args = args[1:]
		if s == "--" {
			break
		}
		for j, l := range s[1:] {
			switch l {
			case 'c', 'l':
			case 'a':
				if j == len(s)-2 && len(args) > 0 {
					args = args[1:]
				}
			default:
				c.argAt(Unknown, x.at, "exec option -"+string(l)+" is not known")
				return
			}
		}
	}
	c.runWrapped(mark, x, args, "exec without a command only applies its redirections")
}

// builtins are the names builtin accepts.
var builtins = map[string]bool{
	":": true, ".": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true, "builtin": true,
	"caller": true, "cd": true, "command": true, "compgen": true, "complete": true, "compopt": true,
	"continue": true, "declare": true, "dirs": true, "disown": true, "echo": true, "enable": true, "eval": true,
	"exec": true, "exit": true, "export": true, "false": true, "fc": true, "fg": true, "getopts": true,
	"hash": true, "help": true, "history": true, "jobs": true, "kill": true, "let": true, "local": true,
	"logout": true, "mapfile": true, "popd": true, "printf": true, "pushd": true, "pwd": true, "read": true,
	"readarray": true, "readonly": true, "return": true, "set": true, "shift": true, "shopt": true,
	"source": true, "suspend": true, "test": true, "times": true, "trap": true, "true": true, "type": true,
	"typeset": true, "ulimit": true, "umask": true, "unalias": true, "unset": true, "wait": true,
}
