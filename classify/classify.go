package classify

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// MaxInputBytes is the longest input Command reads; longer input is
// Unknown without being parsed.
const MaxInputBytes = 256 << 10

// panicked starts the reason of a verdict whose classification failed
// with a panic: a bug, reported as Unknown.
const panicked = "classifier error"

// maxDepth bounds nested scripts (sh -c, eval, trap, git aliases).
const maxDepth = 8

// parsers holds Bash parsers for reuse; a parser is not safe for
// concurrent use, so each call takes its own.
var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
}}

// Command classifies the Bash command text src as ReadOnly, Write or
// Unknown, with the words and operators that decided it.
//
// src is parsed with mvdan.cc/sh/v3/syntax in the Bash dialect. Input that
// does not parse, is empty, is longer than [MaxInputBytes], holds control
// characters other than tab and newline or is not valid UTF-8 is Unknown;
// a parse error is also returned in Verdict.Err. So is input where the
// parser and bash may disagree on where a command, a comment or a
// here-document body begins or ends (the divergence guard: a comment
// ending in a backslash, a backslash-newline in a here-document body or
// in quotes, an unusual here-document delimiter, ...), with a reason
// naming the construct and its offset. Every command of a list,
// pipeline, compound command, substitution and nested script is
// classified and the classes combine with [Class.Max]. Command never
// panics and is safe for concurrent use. See docs/classify.md.
func Command(src string) (v Verdict) {
	c := &classifier{src: src, top: src, exact: true, res: &result{}}
	defer func() {
		// Fail closed: a bug in a rule must not break the caller or
		// let a command through. The fuzz test looks for this reason.
		if e := recover(); e != nil {
			v = Verdict{Class: Unknown, Reasons: []Reason{{Class: Unknown, Why: fmt.Sprintf("%s: %v", panicked, e)}}}
		}
	}()
	if bad, at := badInput(src); bad != "" {
		c.diverge(at, at+1, bad)
		return c.verdict()
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		c.parseError(err)
		return c.verdict()
	}
	c.guard(f)
	c.file(f)
	return c.verdict()
}

// badInput reports input Command refuses to parse, and where.
func badInput(src string) (string, int) {
	if len(src) > MaxInputBytes {
		return fmt.Sprintf("input longer than %d bytes", MaxInputBytes), 0
	}
	for i := 0; i < len(src); i++ {
		if b := src[i]; (b < 0x20 && b != '\t' && b != '\n') || b == 0x7f {
			return fmt.Sprintf("control character %q", b), i
		}
	}
	if !utf8.ValidString(src) {
		for i, r := range src {
			if r == utf8.RuneError {
				return "bytes that are not UTF-8, which bash and the parser may read differently", i
			}
		}
	}
	return "", 0
}

// classifier accumulates the reasons for one input. It is used by one
// goroutine; nested scripts get a child that shares the results.
type classifier struct {
	top string // the input of Command
	src string // the text being parsed: top, or a nested script
	// base and exact map offsets in src to offsets in top: exact means
	// src is top[base:base+len(src)] (always so for the input itself);
	// otherwise every reason points at the span [base, baseEnd) of the
	// word that held the script.
	base, baseEnd int
	exact         bool
	depth         int
	res           *result
}

// result is what the classifiers of one input share.
type result struct {
	class    Class
	reasons  []Reason
	programs []string
	err      error
	// cd records a cd (or pushd, env -C, sudo -D): git may then run in
	// another repository, whose configuration is not trusted.
	cd bool
	// gitAt records git commands found read-only, to revisit if a cd
	// appears anywhere in the input.
	gitAt []Reason
	// funcs holds the names of functions the input declares.
	funcs map[string]bool
	// diverges: bash may read the input differently (Verdict.Diverges).
	diverges bool
	// twice: a script was classified in two readings (nestedPOSIX), so
	// the same reason may have been found twice.
	twice bool
}

func (c *classifier) verdict() Verdict {
	r := c.res
	if r.cd {
		for _, g := range r.gitAt {
			g.Class, g.Why = Unknown, "git runs after a change of directory, in a repository whose configuration is not trusted"
			r.add(g)
		}
	}
	if len(r.reasons) == 0 {
		r.add(Reason{Class: Unknown, Why: "empty command"})
	}
	v := Verdict{Class: r.class, Programs: r.programs, Err: r.err, Diverges: r.diverges}
	for _, x := range r.reasons {
		if x.Class == r.class && !(r.twice && slices.Contains(v.Reasons, x)) {
			v.Reasons = append(v.Reasons, x)
		}
	}
	return v
}

func (r *result) add(x Reason) {
	if len(r.reasons) == 0 {
		r.class = x.Class
	} else {
		r.class = r.class.Max(x.Class)
	}
	r.reasons = append(r.reasons, x)
}

// addAt records a reason for the bytes [pos, end) of c.src.
func (c *classifier) addAt(class Class, pos, end int, why string) {
	if c.exact {
		pos, end = pos+c.base, end+c.base
	} else {
		pos, end = c.base, c.baseEnd
	}
	pos = min(max(pos, 0), len(c.top))
	end = min(max(end, pos), len(c.top))
	c.res.add(Reason{Pos: pos, End: end, Class: class, Text: c.top[pos:end], Why: why})
}

// add records a reason for node n.
func (c *classifier) add(class Class, n syntax.Node, why string) {
	c.addAt(class, int(n.Pos().Offset()), int(n.End().Offset()), why)
}

func (c *classifier) parseError(err error) {
	if c.depth == 0 {
		c.res.err = err
	}
	pos := 0
	switch e := err.(type) {
	case syntax.ParseError:
		pos = int(e.Pos.Offset())
	case syntax.LangError:
		pos = int(e.Pos.Offset())
	}
	c.addAt(Unknown, pos, pos, "does not parse: "+err.Error())
}

// posixParsers holds POSIX sh parsers, for scripts run by sh and dash.
var posixParsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangPOSIX), syntax.KeepComments(true))
}}

// nestedPOSIX classifies a script that sh or dash runs: as Bash (sh is
// bash on some systems) and as POSIX sh (dash on Debian reads `echo
// &>/dev/null touch f` as a background echo and a touch), the stronger
// class winning. A script POSIX sh cannot parse is unknown.
func (c *classifier) nestedPOSIX(script string, a arg) {
	c.nested(script, a)
	if c.depth >= maxDepth || len(script) > MaxInputBytes {
		return
	}
	c.res.twice = true
	n := c.child(script, a)
	p := posixParsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(script), "")
	posixParsers.Put(p)
	if err != nil {
		n.diverge(0, len(script), "sh (dash, POSIX) cannot parse this script as bash does: "+err.Error())
		return
	}
	n.guard(f)
	before := len(c.res.programs)
	n.file(f)
	// The second reading finds the same programs again; keep only the
	// ones the first did not (each occurrence is listed once).
	seen, extra := c.res.programs[:before], c.res.programs[before:]
	kept := before
	for _, p := range extra {
		if !slices.Contains(seen, p) {
			c.res.programs[kept] = p
			kept++
		}
	}
	c.res.programs = c.res.programs[:kept]
}

// child returns a classifier for script, the static value of a, nested
// in c.
func (c *classifier) child(script string, a arg) *classifier {
	pos, end, exactBase := a.pos, a.end, verbatimAt(script, a)
	n := &classifier{top: c.top, src: script, depth: c.depth + 1, res: c.res}
	switch {
	case c.exact && exactBase >= 0:
		n.base, n.exact = c.base+exactBase, true
	case c.exact:
		n.base, n.baseEnd = c.base+pos, c.base+end
	default:
		n.base, n.baseEnd = c.base, c.baseEnd
	}
	return n
}

// nested classifies script, the static value of a (a word of c.src, or
// several words from a.pos to a.end), as a script of its own: sh -c,
// eval, trap, a git alias.
func (c *classifier) nested(script string, a arg) {
	if c.depth >= maxDepth {
		c.addAt(Unknown, a.pos, a.end, "scripts nested too deeply")
		return
	}
	n := c.child(script, a)
	if bad, at := badInput(script); bad != "" {
		n.diverge(at, at+1, bad)
		return
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(script), "")
	parsers.Put(p)
	if err != nil {
		n.parseError(err)
		return
	}
	n.guard(f)
	if len(f.Stmts) == 0 {
		n.addAt(ReadOnly, 0, len(script), "empty script")
		return
	}
	n.file(f)
}

// verbatimAt returns the offset in the source at which script appears
// verbatim as the content of word a, or -1.
func verbatimAt(script string, a arg) int {
	if a.w == nil || len(a.w.Parts) != 1 {
		return -1
	}
	switch p := a.w.Parts[0].(type) {
	case *syntax.SglQuoted:
		if !p.Dollar && p.Value == script {
			return int(p.Left.Offset()) + 1
		}
	case *syntax.Lit:
		if p.Value == script && int(p.End().Offset()-p.Pos().Offset()) == len(script) {
			return int(p.Pos().Offset())
		}
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			if l, ok := p.Parts[0].(*syntax.Lit); ok && l.Value == script &&
				int(l.End().Offset()-l.Pos().Offset()) == len(script) {
				return int(l.Pos().Offset())
			}
		}
	}
	return -1
}

func (c *classifier) file(f *syntax.File) {
	c.stmts(f.Stmts)
}

func (c *classifier) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		c.stmt(s)
	}
}

func (c *classifier) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		at := int(s.Semicolon.Offset())
		c.addAt(Unknown, at, at+1, "runs in the background and outlives the command")
	}
	for _, r := range s.Redirs {
		c.redirect(r)
	}
	c.command(s.Cmd)
}

// command classifies one command node. Node types without a case here
// are Unknown: an unhandled type never passes as read-only.
func (c *classifier) command(cmd syntax.Command) {
	switch x := cmd.(type) {
	case nil:
		// Redirections only, such as "> file"; handled by stmt.
	case *syntax.CallExpr:
		c.call(x)
	case *syntax.BinaryCmd:
		c.stmt(x.X)
		c.stmt(x.Y)
	case *syntax.Block:
		c.stmts(x.Stmts)
	case *syntax.Subshell:
		c.stmts(x.Stmts)
	case *syntax.IfClause:
		for ic := x; ic != nil; ic = ic.Else {
			c.stmts(ic.Cond)
			c.stmts(ic.Then)
		}
	case *syntax.WhileClause:
		c.stmts(x.Cond)
		c.stmts(x.Do)
	case *syntax.ForClause:
		c.forClause(x)
	case *syntax.CaseClause:
		c.word(x.Word)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				c.word(p)
			}
			c.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		c.funcDecl(x)
	case *syntax.ArithmCmd:
		c.arith(x.X, x)
	case *syntax.TestClause:
		c.testExpr(x.X)
	case *syntax.DeclClause:
		c.decl(x)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			c.arith(e, x)
		}
	case *syntax.TimeClause:
		if x.Stmt != nil {
			c.stmt(x.Stmt)
		} else {
			c.add(ReadOnly, x, "time with no command prints shell times")
		}
	case *syntax.CoprocClause:
		c.add(Unknown, x, "coproc starts a background process")
		if x.Name != nil {
			c.word(x.Name)
		}
		c.stmt(x.Stmt)
	default:
		c.add(Unknown, cmd, fmt.Sprintf("unhandled shell construct %T", cmd))
	}
}

func (c *classifier) forClause(x *syntax.ForClause) {
	if x.Select {
		c.add(Unknown, x, "select reads interactive input")
	}
	switch l := x.Loop.(type) {
	case *syntax.WordIter:
		c.assignName(l.Name, "the loop variable")
		for _, w := range l.Items {
			c.word(w)
		}
	case *syntax.CStyleLoop:
		for _, e := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
			if e != nil {
				c.arith(e, l)
			}
		}
	default:
		c.add(Unknown, x, fmt.Sprintf("unhandled loop %T", x.Loop))
	}
	c.stmts(x.Do)
}

func (c *classifier) funcDecl(x *syntax.FuncDecl) {
	c.addAt(Unknown, int(x.Pos().Offset()), int(x.Body.Pos().Offset()),
		"declares a function, which may shadow any command")
	if c.res.funcs == nil {
		c.res.funcs = map[string]bool{}
	}
	if x.Name != nil {
		c.res.funcs[x.Name.Value] = true
	}
	for _, n := range x.Names {
		c.res.funcs[n.Value] = true
	}
	c.stmt(x.Body)
}
