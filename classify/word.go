package classify

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one shell word as the program will see it, after quote removal.
// Only quote removal and unescaping are done statically; every expansion
// (parameters, substitutions, globs, braces, tildes) makes the word
// non-static, because its value is decided at run time.
type arg struct {
	// text is the value if static, else its static prefix: every word
	// the expansion yields begins with text, unless free.
	text   string
	static bool
	// multi: the word may become zero or several words (an unquoted
	// expansion, a glob, a brace list).
	multi bool
	// free: some resulting word may begin with anything, even when text
	// is not empty (word splitting of an unquoted expansion).
	free bool
	// pos and end are offsets of the word in the classifier's src.
	pos, end int
	// w is the word; nil for words a wrapper makes up (xargs input,
	// find's {}) and for option values cut from a word.
	w *syntax.Word
}

// mayBeOption reports whether the word might start with '-' at run time.
func (a arg) mayBeOption() bool {
	if a.static {
		return false
	}
	return a.free || a.text == "" || a.text[0] == '-'
}

// literal reports whether a is static and equal to s.
func (a arg) is(s string) bool { return a.static && a.text == s }

// wordBuilder collects the static text of one word and where expansions
// begin.
type wordBuilder struct {
	val    []byte
	quoted []bool // per byte of val: came from quotes or an escape
	cut    int    // offset in val of the first expansion; -1 if none
	multi  bool
	free   bool
}

func (b *wordBuilder) lit(s string, quoted bool) {
	b.val = append(b.val, s...)
	for range len(s) {
		b.quoted = append(b.quoted, quoted)
	}
}

func (b *wordBuilder) dynamic(multi, free bool) {
	if b.cut < 0 {
		b.cut = len(b.val)
	}
	b.multi = b.multi || multi
	b.free = b.free || free
}

// word analyses w and classifies every expansion inside it.
func (c *classifier) word(w *syntax.Word) arg {
	a := arg{pos: int(w.Pos().Offset()), end: int(w.End().Offset()), w: w}
	if len(w.Parts) == 1 {
		// Fast path for the common plain word.
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[{~!") {
			a.text, a.static = l.Value, true
			return a
		}
	}
	b := wordBuilder{cut: -1}
	for i, p := range w.Parts {
		c.historyBang(p, i == len(w.Parts)-1)
		c.wordPart(p, &b)
	}
	b.shape()
	a.multi, a.free = b.multi, b.free
	if b.cut < 0 {
		a.text, a.static = string(b.val), true
	} else {
		a.text = string(b.val[:b.cut])
	}
	return a
}

func (c *classifier) wordPart(p syntax.WordPart, b *wordBuilder) {
	switch x := p.(type) {
	case *syntax.Lit:
		unescapeUnquoted(x.Value, b)
	case *syntax.SglQuoted:
		if x.Dollar && strings.Contains(x.Value, `\`) {
			// $'...' escapes are decoded by bash; the value is not
			// known statically here (it can hide a name: $'\x72m').
			b.dynamic(false, false)
			return
		}
		b.lit(x.Value, true)
	case *syntax.DblQuoted:
		if x.Dollar {
			// bash looks the text up in a message catalog at run time,
			// and may expand what the translation holds.
			c.add(Unknown, x, `$"…" is translated by bash at run time; the text it runs is not known`)
			b.dynamic(false, false)
		}
		for _, q := range x.Parts {
			c.quotedPart(q, b)
		}
	case *syntax.ParamExp:
		c.paramExp(x)
		b.dynamic(true, true)
	case *syntax.CmdSubst:
		c.cmdSubst(x)
		b.dynamic(true, true)
	case *syntax.ArithmExp:
		c.arith(x.X, x)
		b.dynamic(true, true)
	case *syntax.ProcSubst:
		c.procSubst(x)
		b.dynamic(false, false) // a /dev/fd path
	case *syntax.ExtGlob:
		// bash parses ?( *( +( @( !( as patterns only while extglob is
		// on, and as something else otherwise.
		c.diverge(int(x.Pos().Offset()), int(x.End().Offset()), "an extglob pattern, which bash parses only when extglob is on")
		b.dynamic(true, false)
	default:
		c.add(Unknown, p, fmt.Sprintf("unhandled word part %T", p))
		b.dynamic(true, true)
	}
}

// historyBang refuses a '!' that an interactive bash (or one after set
// -H) would replace by an earlier command line before parsing: one
// followed by anything but a blank, '=', '(' or the end of the word. A
// non-interactive bash, as agents run, does no history expansion; the
// classifier does not know which shell runs the text. last tells whether
// p ends its word.
func (c *classifier) historyBang(p syntax.WordPart, last bool) {
	var lits []*syntax.Lit
	switch x := p.(type) {
	case *syntax.Lit:
		lits = append(lits, x)
	case *syntax.DblQuoted:
		for i, q := range x.Parts {
			if l, ok := q.(*syntax.Lit); ok {
				if i < len(x.Parts)-1 && strings.HasSuffix(l.Value, "!") {
					c.diverge(int(l.End().Offset())-1, int(l.End().Offset()), "a ! that history expansion replaces in an interactive bash")
				}
				lits = append(lits, l)
			}
		}
		last = true // the closing quote follows the last literal
	}
	for _, l := range lits {
		v := l.Value
		for i := strings.IndexByte(v, '!'); i >= 0; {
			if (i > 0 && v[i-1] == '\\') || (i+1 == len(v) && last) || (i+1 < len(v) && strings.IndexByte(" \t\n=(\"", v[i+1]) >= 0) {
				j := strings.IndexByte(v[i+1:], '!')
				if j < 0 {
					break
				}
				i += 1 + j
				continue
			}
			at := int(l.Pos().Offset()) + i
			c.diverge(at, at+1, "a ! that history expansion replaces in an interactive bash")
			break
		}
	}
}

// quotedPart handles a part inside double quotes.
func (c *classifier) quotedPart(p syntax.WordPart, b *wordBuilder) {
	switch x := p.(type) {
	case *syntax.Lit:
		unescapeDouble(x.Value, b)
	case *syntax.ParamExp:
		c.paramExp(x)
		// "$@" and "${a[@]}" become several words.
		all := x.Param != nil && x.Param.Value == "@"
		if idx, ok := x.Index.(*syntax.Word); ok && idx.Lit() == "@" {
			all = true
		}
		b.dynamic(all, all)
	case *syntax.CmdSubst:
		c.cmdSubst(x)
		b.dynamic(false, false)
	case *syntax.ArithmExp:
		c.arith(x.X, x)
		b.dynamic(false, false)
	default:
		c.add(Unknown, p, fmt.Sprintf("unhandled quoted word part %T", p))
		b.dynamic(true, true)
	}
}

// unescapeUnquoted appends an unquoted literal: a backslash quotes the
// next character.
func unescapeUnquoted(s string, b *wordBuilder) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			b.lit(s[i:i+1], true)
			continue
		}
		b.lit(s[i:i+1], false)
	}
}

// unescapeDouble appends a literal from inside double quotes, where a
// backslash quotes only $ ` " \ and newline.
func unescapeDouble(s string, b *wordBuilder) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.lit(s[i:i+1], true)
			}
			continue
		}
		b.lit(s[i:i+1], true)
	}
}

// shape finds unquoted globs, tildes and brace lists in the static text
// and cuts the static prefix before the first one.
func (b *wordBuilder) shape() {
	unq := func(i int) bool { return i < len(b.val) && !b.quoted[i] }
	// A lone "[" is the test command, not a glob.
	lone := len(b.val) == 1 && b.val[0] == '['
	var open []int   // positions of unquoted '{'
	var listy []bool // whether the brace at that depth has ',' or '..'
	for i := 0; i < len(b.val); i++ {
		if !unq(i) {
			continue
		}
		switch ch := b.val[i]; ch {
		case '*', '?':
			b.cutAt(i, true)
		case '[':
			if !lone {
				b.cutAt(i, true)
			}
		case '~':
			if i == 0 || (unq(i-1) && (b.val[i-1] == '=' || b.val[i-1] == ':')) {
				b.cutAt(i, false)
			}
		case '{':
			open = append(open, i)
			listy = append(listy, false)
		case ',':
			if len(listy) > 0 {
				listy[len(listy)-1] = true
			}
		case '.':
			if len(listy) > 0 && unq(i+1) && i+1 < len(b.val) && b.val[i+1] == '.' {
				listy[len(listy)-1] = true
			}
		case '}':
			if n := len(open); n > 0 {
				if listy[n-1] {
					b.cutAt(open[n-1], true)
				}
				open, listy = open[:n-1], listy[:n-1]
			}
		}
	}
}

func (b *wordBuilder) cutAt(i int, multi bool) {
	if b.cut < 0 || i < b.cut {
		b.cut = i
	}
	b.multi = b.multi || multi
}

// paramExp classifies a parameter expansion. Plain expansions only read
// a variable; indirection, subscripts and some operators make bash
// evaluate text as code or assign variables.
func (c *classifier) paramExp(pe *syntax.ParamExp) {
	switch {
	case pe.Flags != nil || pe.NestedParam != nil || len(pe.Modifiers) > 0 || pe.Width || pe.IsSet ||
		pe.Split != syntax.OptUnset || pe.GlobSubst != syntax.OptUnset || pe.RcExpand != syntax.OptUnset:
		c.add(Unknown, pe, "expansion form outside Bash")
		return
	case pe.Excl && pe.Names == 0:
		c.add(Unknown, pe, "indirect expansion evaluates the subscript of the variable it names")
	}
	if pe.Index != nil {
		c.subscript(pe.Index, pe)
	}
	if pe.Slice != nil {
		if pe.Slice.Offset != nil {
			c.arith(pe.Slice.Offset, pe)
		}
		if pe.Slice.Length != nil {
			c.arith(pe.Slice.Length, pe)
		}
	}
	if pe.Repl != nil {
		if pe.Repl.Orig != nil {
			c.word(pe.Repl.Orig)
		}
		if pe.Repl.With != nil {
			c.word(pe.Repl.With)
		}
	}
	if e := pe.Exp; e != nil {
		switch e.Op {
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			c.add(Unknown, pe, "assigns a variable during expansion")
		case syntax.OtherParamOps:
			c.add(Unknown, pe, "${x@op} transforms the value; @P runs prompt expansion, which executes code")
		case syntax.MatchEmpty, syntax.ArrayExclude, syntax.ArrayIntersect:
			c.add(Unknown, pe, "expansion form outside Bash")
		}
		if e.Word != nil {
			c.word(e.Word)
		}
	}
}

// subscript checks an array subscript: only a number, @ or * is inert;
// anything else is evaluated as arithmetic, which runs code hidden in
// variable values.
func (c *classifier) subscript(x syntax.ArithmExpr, at syntax.Node) {
	if w, ok := x.(*syntax.Word); ok {
		if s := w.Lit(); s == "@" || s == "*" {
			return
		}
	}
	c.arith(x, at)
}

// arith classifies an arithmetic expression. Only numeric literals are
// inert: bash evaluates a variable's value as arithmetic too, and a value
// such as a[$(cmd)] runs cmd.
func (c *classifier) arith(x syntax.ArithmExpr, at syntax.Node) {
	switch e := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		c.arith(e.X, at)
		c.arith(e.Y, at)
	case *syntax.UnaryArithm:
		if e.Op == syntax.Inc || e.Op == syntax.Dec {
			c.add(Unknown, e, "arithmetic assigns a variable")
		}
		c.arith(e.X, at)
	case *syntax.ParenArithm:
		c.arith(e.X, at)
	case *syntax.Word:
		a := c.word(e)
		if !a.static || !isNumber(a.text) {
			c.add(Unknown, e, "arithmetic evaluates variables, and code hidden in their values")
		}
	default:
		c.add(Unknown, x, fmt.Sprintf("unhandled arithmetic %T", x))
	}
}

// isNumber reports whether s is a Bash integer constant: decimal, 0x hex,
// octal, or BASE#DIGITS.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if i := strings.IndexByte(s, '#'); i > 0 {
		if !isDigits(s[:i]) || i+1 >= len(s) {
			return false
		}
		for _, r := range s[i+1:] {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '@' || r == '_') {
				return false
			}
		}
		return true
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for _, r := range s[2:] {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
				return false
			}
		}
		return true
	}
	return isDigits(s)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (c *classifier) cmdSubst(x *syntax.CmdSubst) {
	c.add(Unknown, x, "command substitution: its output becomes part of the command")
	c.stmts(x.Stmts)
}

func (c *classifier) procSubst(x *syntax.ProcSubst) {
	c.add(Unknown, x, "process substitution runs a command alongside")
	c.stmts(x.Stmts)
}
