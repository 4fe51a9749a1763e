package classify

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell builtins that only read, or that change the shell in ways that
// matter to later commands.

func cdCmd(c *classifier, x *cmd) {
	c.res.cd = true
	c.argAt(ReadOnly, x.at, x.name+" changes the shell's directory only")
}

// printfCmd: printf -v assigns a variable, and bash evaluates a
// subscript in its name.
func printfCmd(c *classifier, x *cmd) {
	mark := c.mark()
	if len(x.args) > 0 {
		a := x.args[0]
		switch {
		case a.mayBeOption():
			c.argAt(Unknown, a, "argument decided at run time may be -v")
		case a.static && strings.HasPrefix(a.text, "-v"):
			c.argAt(Unknown, a, "printf -v assigns a variable, and bash evaluates a subscript in its name")
		}
	}
	c.finishArg(mark, x.at, "printf prints its arguments")
}

// readCmd: read assigns variables; a subscripted name is evaluated.
func readCmd(c *classifier, x *cmd) {
	mark := c.mark()
	valued := "adinNptu"
	for i := 0; i < len(x.args); i++ {
		a := x.args[i]
		switch {
		case !a.static:
			c.argAt(Unknown, a, "read argument decided at run time")
		case strings.HasPrefix(a.text, "-") && len(a.text) > 1 && a.text != "--":
			for j := 1; j < len(a.text); j++ {
				l := a.text[j]
				if !strings.ContainsRune("ersadinNptu", rune(l)) {
					c.argAt(Unknown, a, "read option -"+string(l)+" is not known")
					break
				}
				if strings.IndexByte(valued, l) >= 0 {
					val := a.text[j+1:]
					if val == "" && i+1 < len(x.args) {
						i++
						val = x.args[i].text
						if l == 'a' && !x.args[i].static {
							val = "["
						}
					}
					if l == 'a' && !safeVarName(val) {
						c.argAt(Unknown, a, "read -a assigns an array whose name is not plain or not safe to set")
					}
					break
				}
			}
		case a.text == "--":
		default:
			if !safeVarName(a.text) {
				c.argAt(Unknown, a, "read assigns a variable whose name is not plain or not safe to set")
			}
		}
	}
	c.finishArg(mark, x.at, "read assigns shell variables from input")
}

// testCmd: test and [ only read, except -v and -R, whose operand bash
// evaluates as a subscript: test -v 'a[$(cmd)]' runs cmd.
func testCmd(c *classifier, x *cmd) {
	mark := c.mark()
	args := x.args
	if x.name == "[" {
		if len(args) == 0 || !args[len(args)-1].is("]") {
			c.argAt(Unknown, x.span(), "[ without a closing ]")
			return
		}
		args = args[:len(args)-1]
	}
	for i, a := range args {
		if a.multi {
			c.argAt(Unknown, a, "test argument may become several words, and -v evaluates subscripts")
			return
		}
		mayBeV := a.is("-v") || a.is("-R") || a.mayBeOption()
		if mayBeV && i+1 < len(args) {
			if n := args[i+1]; !n.static || strings.ContainsAny(n.text, "[]") {
				c.argAt(Unknown, a, "test -v evaluates the subscript of its operand, which can run commands")
			}
		}
	}
	c.finishArg(mark, x.at, "test only checks conditions")
}

// testExpr classifies [[ ]]: -v and -R evaluate subscripts, and the
// arithmetic comparisons evaluate their operands as arithmetic.
func (c *classifier) testExpr(e syntax.TestExpr) {
	mark := c.mark()
	c.testNode(e)
	c.finish(mark, e.Pos(), e.End(), "[[ ]] only checks conditions")
}

func (c *classifier) testNode(e syntax.TestExpr) {
	switch t := e.(type) {
	case *syntax.Word:
		c.word(t)
	case *syntax.ParenTest:
		c.testNode(t.X)
	case *syntax.UnaryTest:
		if t.Op == syntax.TsVarSet || t.Op == syntax.TsRefVar {
			if w, ok := t.X.(*syntax.Word); !ok || !isName(w.Lit()) {
				c.add(Unknown, t, "-v evaluates the subscript of its operand, which can run commands")
			}
		}
		c.testNode(t.X)
	case *syntax.BinaryTest:
		switch t.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			c.testArith(t.X)
			c.testArith(t.Y)
			return
		}
		if t.Op == syntax.TsReMatch {
			c.regexOperand(t.Y)
		}
		c.testNode(t.X)
		c.testNode(t.Y)
	default:
		c.add(Unknown, e, "unhandled test expression")
	}
}

// regexOperand refuses the right side of [[ =~ ]] when it holds a byte
// that bash's lexer treats specially there (parentheses, '|', blanks
// and redirection or list operators are part of the regular
// expression): the parser may split it elsewhere.
func (c *classifier) regexOperand(e syntax.TestExpr) {
	pos, end := int(e.Pos().Offset()), int(e.End().Offset())
	if i := strings.IndexAny(c.src[pos:end], "()|<>;& \t\n\\`"); i >= 0 {
		c.diverge(pos+i, pos+i+1, "a [[ =~ ]] regular expression with "+strconv.Quote(c.src[pos+i:pos+i+1])+", which bash lexes differently from other words")
	}
}

func (c *classifier) testArith(e syntax.TestExpr) {
	w, ok := e.(*syntax.Word)
	if !ok {
		c.testNode(e)
		c.add(Unknown, e, "arithmetic comparison of an expression")
		return
	}
	if a := c.word(w); !a.static || !isNumber(a.text) {
		c.add(Unknown, w, "[[ -eq ]] evaluates its operands as arithmetic, and code hidden in variable values")
	}
}

// decl classifies declare, local, export, readonly and typeset.
func (c *classifier) decl(d *syntax.DeclClause) {
	mark := c.mark()
	if d.Variant.Value == "nameref" {
		c.add(Unknown, d.Variant, "nameref makes one name stand for another variable")
	}
	for _, a := range d.Args {
		if a.Naked && a.Name == nil {
			w := c.word(a.Value)
			switch {
			case !w.static:
				c.argAt(Unknown, w, d.Variant.Value+" argument decided at run time")
			case strings.HasPrefix(w.text, "-") || strings.HasPrefix(w.text, "+"):
				for _, l := range w.text[1:] {
					if !strings.ContainsRune("pfFxrglutaA", l) {
						c.argAt(Unknown, w, d.Variant.Value+" -"+string(l)+" evaluates values or links names")
						break
					}
				}
			case !safeVarName(w.text):
				c.argAt(Unknown, w, "declares a variable whose name is not safe to set")
			}
			continue
		}
		if a.Value != nil && !a.Naked {
			// declare -a a='($(cmd))' (or declare on an existing array)
			// reads a value that begins with "(" as a compound
			// assignment and runs what its elements expand; a value
			// decided at run time may become one.
			if v := c.word(a.Value); !v.static || strings.HasPrefix(strings.TrimLeft(v.text, " \t\n"), "(") {
				c.argAt(Unknown, v, d.Variant.Value+" may read this value as an array assignment and expand it")
			}
			c.assignRest(a)
			continue
		}
		c.assign(a)
	}
	c.finish(mark, d.Pos(), d.End(), d.Variant.Value+" declares shell variables")
}

// setCmd allows the shell options that only change error handling,
// tracing and globbing, and setting positional parameters.
func setCmd(c *classifier, x *cmd) {
	mark := c.mark()
	for i := 0; i < len(x.args); i++ {
		a := x.args[i]
		if !a.static {
			c.argAt(Unknown, a, "set argument decided at run time")
			break
		}
		s := a.text
		if s == "" || s == "--" || s == "-" || (s[0] != '-' && s[0] != '+') {
			break // the rest are positional parameters
		}
		for _, l := range s[1:] {
			switch {
			case l == 'o':
				if i+1 < len(x.args) {
					i++
					if o := x.args[i]; !o.static || !safeSetOptions[o.text] {
						c.argAt(Unknown, o, "shell option not known to be harmless")
					}
				}
			case l == 'H':
				c.argAt(Unknown, a, "set -H turns on history expansion, which changes how bash reads the lines after it")
			case !strings.ContainsRune("euxvfCabhmnB", l):
				c.argAt(Unknown, a, "set -"+string(l)+" is not known to be harmless")
			}
		}
	}
	c.finishArg(mark, x.at, "set changes shell options or prints variables")
}

// safeSetOptions are the set -o options that change neither what runs
// nor how bash reads later lines: histexpand and posix (which turns on
// alias expansion) are not among them.
var safeSetOptions = map[string]bool{
	"errexit": true, "nounset": true, "xtrace": true, "verbose": true, "pipefail": true, "noglob": true,
	"noclobber": true, "allexport": false, "notify": true, "braceexpand": true, "hashall": true,
	"monitor": true, "noexec": true, "physical": true, "errtrace": true,
	"functrace": true,
}

// safeShopts are the shopt options that only change globbing and
// matching; extglob is not among them, since it changes how bash parses
// the lines after it.
var safeShopts = map[string]bool{
	"nullglob": true, "globstar": true, "dotglob": true, "nocaseglob": true,
	"nocasematch": true, "failglob": true, "lastpipe": true, "globasciiranges": true, "inherit_errexit": true,
}

func shoptCmd(c *classifier, x *cmd) {
	mark := c.mark()
	for _, a := range x.args {
		switch {
		case !a.static:
			c.argAt(Unknown, a, "shopt argument decided at run time")
		case strings.HasPrefix(a.text, "-"):
			if strings.Trim(a.text[1:], "psuqo") != "" {
				c.argAt(Unknown, a, "shopt option not known")
			}
		case !safeShopts[a.text]:
			c.argAt(Unknown, a, "shell option not known to be harmless")
		}
	}
	c.finishArg(mark, x.at, "shopt changes globbing options or prints them")
}

// printsWithout returns a handler for builtins that only print when given
// no arguments, or only the listed options.
func printsWithout(opts, why string) handler {
	return func(c *classifier, x *cmd) {
		for _, a := range x.args {
			if !a.static || !strings.HasPrefix(a.text, "-") || strings.Trim(a.text[1:], opts) != "" || a.text == "-" {
				c.argAt(Unknown, a, x.name+" with arguments changes the shell")
				return
			}
		}
		c.argAt(ReadOnly, x.at, why)
	}
}

func waitCmd(c *classifier, x *cmd) {
	mark := c.mark()
	for i, a := range x.args {
		if a.is("-p") || a.mayBeOption() {
			if i+1 >= len(x.args) || !x.args[i+1].static || !safeVarName(x.args[i+1].text) {
				c.argAt(Unknown, a, "wait -p assigns a variable whose name is not plain")
			}
		}
	}
	c.finishArg(mark, x.at, "wait waits for jobs")
}

func killCmd(c *classifier, x *cmd) {
	if len(x.args) > 0 && (x.args[0].is("-l") || x.args[0].is("-L") || x.args[0].is("--list") || x.args[0].is("--table")) {
		c.argAt(Unknown, x.at, "kill -l only lists signals, but kill is not proven harmless by the anchors")
		return
	}
	c.argAt(Write, x.at, "kill signals processes")
}

func historyCmd(c *classifier, x *cmd) {
	if len(x.args) == 0 || (len(x.args) == 1 && x.args[0].static && isDigits(x.args[0].text)) {
		c.argAt(ReadOnly, x.at, "history prints the history")
		return
	}
	a := x.args[0]
	if a.static && len(a.text) > 1 && a.text[0] == '-' && strings.ContainsAny(a.text, "cdwas") {
		c.argAt(Write, a, "history clears, deletes, adds or writes history")
		return
	}
	c.argAt(Unknown, a, "history option reads or expands history")
}

func fcCmd(c *classifier, x *cmd) {
	if len(x.args) > 0 && x.args[0].static && strings.HasPrefix(x.args[0].text, "-l") {
		c.argAt(ReadOnly, x.at, "fc -l lists history")
		return
	}
	c.argAt(Unknown, x.at, "fc edits and runs history")
}

func trapCmd(c *classifier, x *cmd) {
	args := x.args
	if len(args) > 0 && args[0].is("--") {
		args = args[1:]
	}
	switch {
	case len(args) == 0 || args[0].is("-l") || args[0].is("-p") || args[0].is("-lp") || args[0].is("-pl"):
		c.argAt(ReadOnly, x.at, "trap prints traps or signals")
	case len(args) == 1 || args[0].is("-") || args[0].is(""):
		c.argAt(ReadOnly, x.at, "trap resets or ignores signals")
	default:
		c.argAt(Unknown, x.at, "trap runs its text as a script on a signal")
		c.script(args[0], "trap runs this script on a signal")
	}
}

func readOnlyBuiltin(why string) handler {
	return func(c *classifier, x *cmd) { c.argAt(ReadOnly, x.at, x.name+" "+why) }
}
