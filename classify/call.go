package classify

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// cmd is one simple command after its program name was resolved.
type cmd struct {
	name string // the program, without directory
	at   arg    // the name word
	args []arg  // the arguments after the name
}

// handler classifies one program's arguments. It adds a reason for every
// problem it finds; finish adds the read-only reason when there is none.
type handler func(c *classifier, x *cmd)

func (c *classifier) call(x *syntax.CallExpr) {
	mark := c.mark()
	if len(x.Args) == 0 {
		for _, a := range x.Assigns {
			c.assign(a)
		}
		c.finish(mark, x.Pos(), x.End(), "assigns shell variables")
		return
	}
	for _, a := range x.Assigns {
		c.assign(a)
	}
	args := make([]arg, len(x.Args))
	for i, w := range x.Args {
		args[i] = c.word(w)
	}
	c.exec(args)
}

// exec resolves the program named by args[0] and classifies the call.
func (c *classifier) exec(args []arg) {
	name := args[0]
	if !name.static {
		c.argAt(Unknown, name, "the program name is decided at run time")
		return
	}
	prog := name.text
	if strings.Contains(prog, "/") {
		base, ok := systemProgram(prog)
		if !ok {
			c.argAt(Unknown, name, "runs a program by path; only /bin, /usr/bin, /sbin and /usr/sbin are trusted to hold the programs they name")
			return
		}
		prog = base
	}
	if c.res.funcs[prog] {
		c.argAt(Unknown, name, "calls a function declared in this input")
		return
	}
	c.res.programs = append(c.res.programs, prog)
	h := handlers[prog]
	if h == nil {
		c.argAt(Unknown, name, "not a program the classifier knows")
		return
	}
	h(c, &cmd{name: prog, at: name, args: args[1:]})
}

// systemProgram returns the base name of p if p names a program in a
// system directory.
func systemProgram(p string) (string, bool) {
	dir, base := path.Split(p)
	switch path.Clean(dir) {
	case "/bin", "/usr/bin", "/sbin", "/usr/sbin":
		return base, base != "" && base != "." && base != ".."
	}
	return "", false
}

// mark and finish bracket the classification of one construct: finish
// records a read-only reason when nothing since mark raised the class.
func (c *classifier) mark() int { return len(c.res.reasons) }

func (c *classifier) raised(mark int) bool {
	for _, r := range c.res.reasons[mark:] {
		if r.Class != ReadOnly {
			return true
		}
	}
	return false
}

func (c *classifier) finish(mark int, pos, end syntax.Pos, why string) {
	if !c.raised(mark) {
		c.addAt(ReadOnly, int(pos.Offset()), int(end.Offset()), why)
	}
}

func (c *classifier) finishArg(mark int, a arg, why string) {
	if !c.raised(mark) {
		c.argAt(ReadOnly, a, why)
	}
}

func (c *classifier) argAt(class Class, a arg, why string) {
	c.addAt(class, a.pos, a.end, why)
}

// assign classifies an assignment, as a prefix of a command or on its
// own: its value's expansions, its subscripts and the variable's name.
func (c *classifier) assign(a *syntax.Assign) {
	if a.Value != nil {
		c.word(a.Value)
	}
	c.assignRest(a)
}

// assignRest is assign without the value, which the caller classified.
func (c *classifier) assignRest(a *syntax.Assign) {
	if a.Index != nil {
		c.subscript(a.Index, a)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				c.subscript(e.Index, a.Array)
			}
			if e.Value != nil {
				c.word(e.Value)
			}
		}
	}
	if a.Name != nil {
		c.assignName(a.Name, "")
	}
}

// assignName checks that setting the variable n cannot change what a
// later program runs or where it reads: lower-case names, and a few
// upper-case ones that only affect locale and colours.
func (c *classifier) assignName(n *syntax.Lit, what string) {
	if n == nil || safeVarName(n.Value) {
		return
	}
	if what == "" {
		what = n.Value
	}
	c.add(Unknown, n, fmt.Sprintf("setting %s can change what later programs run or read", what))
}

// safeEnv lists upper-case variables a command may set: they change
// formatting, locale or colours, never which program runs, which files
// are read, or whether a pager, editor or hook starts.
var safeEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLORTERM": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true,
	"COLUMNS": true, "LINES": true, "TIME_STYLE": true, "QUOTING_STYLE": true,
	"BLOCK_SIZE": true, "DU_BLOCK_SIZE": true, "DF_BLOCK_SIZE": true, "LS_BLOCK_SIZE": true,
	"LS_COLORS": true, "GREP_COLOR": true, "GREP_COLORS": true,
	"CI": true, "NODE_ENV": true, "RUST_LOG": true, "RUST_BACKTRACE": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
	"GOOS": true, "GOARCH": true, "CGO_ENABLED": true,
}

// safeVarName reports whether a variable may be set: a lower-case name
// (programs read upper-case environment variables; the lower-case proxy
// variables only matter to network clients, which are never read-only),
// LC_*, or a name in safeEnv.
func safeVarName(s string) bool {
	if safeEnv[s] || (strings.HasPrefix(s, "LC_") && isName(s)) {
		return true
	}
	if s == "" || !isName(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

// span is the extent of the whole command, for reasons about it.
func (x *cmd) span() arg {
	a := x.at
	if n := len(x.args); n > 0 && x.args[n-1].end > a.end {
		a.end = x.args[n-1].end
	}
	return a
}
