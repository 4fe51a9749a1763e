package classify

import (
	"fmt"
	"iter"
	"sort"
	"strings"
)

// argMode says whether an option takes a value.
type argMode uint8

const (
	noArg  argMode = iota
	reqArg         // -k VALUE, -kVALUE, --key VALUE, --key=VALUE
	optArg         // -iSUFFIX, --in-place=SUFFIX (attached only)
)

// opt is one option of a program.
type opt struct {
	name  string // "-o" or "--output"
	mode  argMode
	class Class // ReadOnly unless the option writes or runs something
}

// optTable is the parsed form of an option list. See parseOpts.
type optTable struct {
	short   [128]*opt
	long    []*opt // sorted by name
	numeric bool   // -NUM is an option (head -20)
}

// parseOpts reads an option list: words separated by white space, each
// "-x" or "--name", then ":" if it takes a value or "::" if the value is
// optional and attached only, then "!w" if it writes or "!u" if it runs
// code or has effects the classifier cannot bound. The word "-NUM" allows
// numeric options. For example:
//
//	-o:!w --output:!w -k: --key: -r --reverse --compress-program:!u
//
// It panics on a malformed list: the lists are constants in this package.
func parseOpts(spec string) *optTable {
	t := &optTable{}
	for _, f := range strings.Fields(spec) {
		if f == "-NUM" {
			t.numeric = true
			continue
		}
		o := &opt{class: ReadOnly}
		f, mark, _ := strings.Cut(f, "!")
		switch mark {
		case "":
		case "w":
			o.class = Write
		case "u":
			o.class = Unknown
		default:
			panic("classify: bad option mark in " + f)
		}
		switch {
		case strings.HasSuffix(f, "::"):
			o.mode, f = optArg, strings.TrimSuffix(f, "::")
		case strings.HasSuffix(f, ":"):
			o.mode, f = reqArg, strings.TrimSuffix(f, ":")
		}
		o.name = f
		switch {
		case strings.HasPrefix(f, "--") && len(f) > 2:
			t.long = append(t.long, o)
		case len(f) == 2 && f[0] == '-' && f[1] < 128:
			if t.short[f[1]] != nil {
				panic("classify: duplicate option " + f)
			}
			t.short[f[1]] = o
		default:
			panic("classify: bad option " + f)
		}
	}
	sort.Slice(t.long, func(i, j int) bool { return t.long[i].name < t.long[j].name })
	return t
}

// lookupLong finds --name as getopt_long does: an exact match, or the
// one option that name abbreviates. When name abbreviates several
// options the result is the strongest of them, so an abbreviation can
// never hide a dangerous option listed in the table; options missing
// from the table are unknown options.
func (t *optTable) lookupLong(name string) (*opt, string) {
	key := "--" + name
	i := sort.Search(len(t.long), func(i int) bool { return t.long[i].name >= key })
	if i < len(t.long) && t.long[i].name == key {
		return t.long[i], ""
	}
	var found *opt
	for ; i < len(t.long) && strings.HasPrefix(t.long[i].name, key); i++ {
		o := t.long[i]
		switch {
		case found == nil:
			found = o
		case found.mode != o.mode:
			return nil, fmt.Sprintf("option %s is ambiguous", key)
		case o.class.rank() > found.class.rank():
			found = o
		}
	}
	if found == nil {
		return nil, fmt.Sprintf("option %s is not in the table of known options", key)
	}
	return found, ""
}

// item is one option or operand from getopt.
type item struct {
	opt    *opt // nil for an operand
	val    arg  // the option's value, or the operand
	hasVal bool
	at     arg    // the word the item came from
	bad    string // set when the word cannot be read safely
}

// getopt walks arguments as GNU getopt_long does: options may follow
// operands (unless stop), "--" ends options, short options cluster, and
// long options may be abbreviated. A word whose value is decided at run
// time and might begin with '-' cannot be read; it comes back with bad.
type getopt struct {
	t       *optTable
	args    []arg
	i       int
	stop    bool // options end at the first operand (getopt "+")
	done    bool
	rest    string // the rest of a short-option cluster
	restArg arg
}

var numericOpt = &opt{name: "-NUM", class: ReadOnly}

// all yields the items of g in order, from where g stands.
func (g *getopt) all() iter.Seq[item] {
	return func(yield func(item) bool) {
		for {
			it, ok := g.next()
			if !ok || !yield(it) {
				return
			}
		}
	}
}

// options walks g and yields each option. It reports every word it
// cannot read as Unknown and appends each operand to *ops, in order: the
// loop every option-table handler shares. A handler that stops at a word
// ranges over [getopt.all] itself.
func (c *classifier) options(g getopt, ops *[]arg) iter.Seq[item] {
	return func(yield func(item) bool) {
		for it := range g.all() {
			switch {
			case it.bad != "":
				c.argAt(Unknown, it.at, it.bad)
			case it.opt == nil:
				*ops = append(*ops, it.val)
			case !yield(it):
				return
			}
		}
	}
}

// optionWords yields the static words of args before "--" that spell
// options ("-x", "--name", "--name=VALUE"), for handlers that match
// options by name rather than through an [optTable]. A word decided at
// run time that may be an option is reported as Unknown; "--name=$VALUE"
// counts as static, since only its value is dynamic. Every other word,
// and each word after "--", is appended to *ops.
func (c *classifier) optionWords(args []arg, ops *[]arg) iter.Seq[arg] {
	return func(yield func(arg) bool) {
		for i, a := range args {
			if !a.static && !a.free && strings.HasPrefix(a.text, "--") && strings.Contains(a.text, "=") {
				a.static = true // only the value is dynamic; the name decides
			}
			switch {
			case !a.static && a.mayBeOption():
				c.argAt(Unknown, a, "argument decided at run time may be an option")
			case !a.static:
				*ops = append(*ops, a)
			case a.text == "--":
				*ops = append(*ops, args[i+1:]...)
				return
			case len(a.text) < 2 || a.text[0] != '-':
				*ops = append(*ops, a)
			case !yield(a):
				return
			}
		}
	}
}

func (g *getopt) next() (item, bool) {
	if g.rest != "" {
		return g.short(), true
	}
	for g.i < len(g.args) {
		a := g.args[g.i]
		g.i++
		switch {
		case g.done:
			return item{val: a, at: a}, true
		case !a.static && !a.free && !g.stop && optionWithDynamicValue(a.text):
			// --name=$VALUE or -x$VALUE: the option is static, only
			// its value is decided at run time.
			if a.text[1] == '-' {
				return g.long(a), true
			}
			g.rest, g.restArg = a.text[1:], a
			return g.short(), true
		case !a.static:
			if a.mayBeOption() {
				return item{at: a, bad: "argument decided at run time may be an option"}, true
			}
			g.done = g.done || g.stop
			return item{val: a, at: a}, true
		case a.text == "--":
			g.done = true
			continue
		case len(a.text) < 2 || a.text[0] != '-':
			g.done = g.done || g.stop
			return item{val: a, at: a}, true
		case a.text[1] == '-':
			return g.long(a), true
		default:
			g.rest, g.restArg = a.text[1:], a
			return g.short(), true
		}
	}
	return item{}, false
}

// optionWithDynamicValue reports whether the static prefix s of a word
// fixes an option: "--name=" or "-x" followed by the dynamic part.
func optionWithDynamicValue(s string) bool {
	if strings.HasPrefix(s, "--") {
		return strings.Contains(s, "=")
	}
	return len(s) >= 2 && s[0] == '-'
}

func (g *getopt) long(a arg) item {
	name, val, hasEq := strings.Cut(a.text[2:], "=")
	o, bad := g.t.lookupLong(name)
	if bad != "" {
		return item{at: a, bad: bad}
	}
	it := item{opt: o, at: a}
	switch {
	case o.mode == noArg && hasEq:
		it.bad = fmt.Sprintf("option %s takes no value", o.name)
	case hasEq:
		it.val, it.hasVal = arg{text: val, static: a.static, pos: a.pos, end: a.end}, true
	case o.mode == reqArg:
		g.value(&it)
	}
	return it
}

func (g *getopt) short() item {
	a := g.restArg
	l := g.rest[0]
	if g.t.numeric && l >= '0' && l <= '9' {
		g.rest = strings.TrimLeft(g.rest, "0123456789")
		return item{opt: numericOpt, at: a}
	}
	g.rest = g.rest[1:]
	var o *opt
	if l < 128 {
		o = g.t.short[l]
	}
	if o == nil {
		g.rest = ""
		return item{at: a, bad: fmt.Sprintf("option -%c is not in the table of known options", l)}
	}
	it := item{opt: o, at: a}
	switch {
	case o.mode != noArg && (g.rest != "" || !a.static):
		it.val, it.hasVal = arg{text: g.rest, static: a.static, pos: a.pos, end: a.end}, true
		g.rest = ""
	case !a.static && g.rest == "":
		// The dynamic part would continue the cluster with letters
		// decided at run time.
		it.bad = fmt.Sprintf("letters after -%c are decided at run time", l)
	case o.mode == reqArg:
		g.value(&it)
	}
	return it
}

// value takes the next word as the value of it.opt.
func (g *getopt) value(it *item) {
	if g.i >= len(g.args) {
		it.bad = fmt.Sprintf("option %s lacks its value", it.opt.name)
		return
	}
	v := g.args[g.i]
	g.i++
	it.val, it.hasVal = v, true
	if v.multi && v.free {
		it.bad = fmt.Sprintf("value of %s is split at run time and may add options", it.opt.name)
	}
}
