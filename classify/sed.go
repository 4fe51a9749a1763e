package classify

import (
	"strings"
)

var sedOpts = parseOpts(`-n --quiet --silent -e: --expression: -E -r --regexp-extended -s --separate
	-z --null-data -u --unbuffered -l: --line-length: --posix --debug --sandbox --follow-symlinks
	-b --binary --help --version -f:!u --file:!u -i::!w --in-place::!w -I::!w`)

// sedCmd classifies sed: -i writes; the script is read as GNU sed reads
// it, and its w, W, e, r and R commands and s///w and s///e flags decide.
func sedCmd(c *classifier, x *cmd) {
	mark := c.mark()
	var scripts []string
	var at []arg
	var ops []arg
	for it := range c.options(getopt{t: sedOpts, args: x.args}, &ops) {
		switch {
		case it.opt.class == Write:
			c.argAt(Write, it.at, "sed "+it.opt.name+" edits files in place")
		case it.opt.class == Unknown:
			c.argAt(Unknown, it.at, "sed "+it.opt.name+" reads its script from a file")
		case it.opt.name == "-e" || it.opt.name == "--expression":
			scripts, at = append(scripts, it.val.text), append(at, it.val)
			if !it.val.static {
				c.argAt(Unknown, it.val, "sed script decided at run time")
			}
		}
	}
	if len(scripts) == 0 && !c.raised(mark) {
		if len(ops) == 0 {
			c.argAt(Unknown, x.span(), "sed without a script")
			return
		}
		scripts, at = []string{ops[0].text}, []arg{ops[0]}
		if !ops[0].static {
			c.argAt(Unknown, ops[0], "sed script decided at run time")
		}
	}
	if !c.raised(mark) {
		if class, why := sedScript(strings.Join(scripts, "\n")); class != ReadOnly {
			span := at[0]
			span.end = at[len(at)-1].end
			c.argAt(class, span, why)
		}
	}
	c.finishArg(mark, x.at, "sed prints edited text")
}

// sedScript classifies a sed script. Seds disagree on whether a
// delimiter inside a bracket expression ends a regex, so the script is
// read three ways and the strongest class wins: it is read-only only
// when every reading finds nothing but read-only commands.
func sedScript(s string) (Class, string) {
	class, why := ReadOnly, ""
	for _, mode := range []bracketMode{bracketNone, bracketLiteral, bracketEscape} {
		p := sedParser{s: s, brackets: mode}
		if cl, w := p.script(); cl.rank() > class.rank() || (why == "" && cl != ReadOnly) {
			class, why = cl, w
		}
	}
	return class, why
}

type bracketMode uint8

const (
	bracketNone    bracketMode = iota // a delimiter always ends the regex
	bracketLiteral                    // [...] holds delimiters; backslash is literal inside
	bracketEscape                     // [...] holds delimiters; backslash escapes inside
)

type sedParser struct {
	s        string
	i        int
	brackets bracketMode
}

func (p *sedParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sedParser) spaces() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *sedParser) toEOL() string {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *sedParser) script() (Class, string) {
	class, why := ReadOnly, ""
	raise := func(c Class, w string) {
		if c.rank() > class.rank() {
			class, why = c, w
		}
	}
	// sedUnknown gives up: Unknown, unless a write was already found.
	sedUnknown := func(w string) (Class, string) {
		raise(Unknown, w)
		return class, why
	}
	for {
		for p.i < len(p.s) && strings.IndexByte(" \t\n;", p.s[p.i]) >= 0 {
			p.i++
		}
		if p.i >= len(p.s) {
			return class, why
		}
		if p.peek() == '#' {
			p.toEOL()
			continue
		}
		if !p.address() {
			return sedUnknown("sed address the classifier cannot read")
		}
		p.spaces()
		if p.peek() == ',' {
			p.i++
			p.spaces()
			if !p.address() {
				return sedUnknown("sed address the classifier cannot read")
			}
		}
		p.spaces()
		for p.peek() == '!' {
			p.i++
			p.spaces()
		}
		if p.i >= len(p.s) {
			return sedUnknown("sed address without a command")
		}
		ch := p.s[p.i]
		p.i++
		if ch == '{' {
			continue // a command may follow directly
		}
		switch ch {
		case '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			p.spaces()
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
		case ':', 'b', 't', 'T', 'v':
			// GNU sed ends a label at a blank or ';' and reads the rest
			// of the line as commands (":x e touch y" runs touch); other
			// seds take the rest of the line. Stop at either: text after
			// a blank is then refused below.
			p.spaces()
			for p.i < len(p.s) && strings.IndexByte(" \t\n;", p.s[p.i]) < 0 {
				p.i++
			}
		case 'a', 'i', 'c':
			p.text()
		case 'r', 'R':
			p.toEOL()
			raise(Unknown, "sed "+string(ch)+" reads a file into the output")
		case 'w', 'W':
			p.toEOL()
			raise(Write, "sed "+string(ch)+" writes to a file")
		case 'e':
			p.toEOL()
			raise(Unknown, "sed e runs a shell command")
		case 's':
			c, w, ok := p.subst()
			if !ok {
				return sedUnknown("sed s command the classifier cannot read")
			}
			raise(c, w)
		case 'y':
			d := p.peek()
			if d == 0 || d == '\n' || d == '\\' {
				return sedUnknown("sed y command the classifier cannot read")
			}
			p.i++
			if _, ok := p.delimited(d, false); !ok {
				return sedUnknown("sed y command the classifier cannot read")
			}
			if _, ok := p.delimited(d, false); !ok {
				return sedUnknown("sed y command the classifier cannot read")
			}
		default:
			return sedUnknown("sed command " + string(ch) + " is not known")
		}
		p.spaces()
		if p.i < len(p.s) && strings.IndexByte("\n;}#", p.s[p.i]) < 0 {
			return sedUnknown("sed command followed by text the classifier cannot read")
		}
	}
}

// text skips the text of a, i and c: to the end of the line, where a
// backslash before the newline continues it.
func (p *sedParser) text() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '\n':
			return
		}
		p.i++
	}
}

// address skips one address, if any, and reports whether it could.
func (p *sedParser) address() bool {
	switch ch := p.peek(); {
	case ch >= '0' && ch <= '9' || ch == '+' || ch == '~':
		p.i++
		for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '~') {
			p.i++
		}
	case ch == '$':
		p.i++
	case ch == '/' || ch == '\\':
		d := byte('/')
		p.i++
		if ch == '\\' {
			d = p.peek()
			if d == 0 || d == '\n' || d == '\\' {
				return false
			}
			p.i++
		}
		if _, ok := p.delimited(d, true); !ok {
			return false
		}
		for p.peek() == 'I' || p.peek() == 'M' {
			p.i++
		}
	}
	return true
}

// delimited reads up to the unescaped delimiter d and skips it.
func (p *sedParser) delimited(d byte, regex bool) (string, bool) {
	start := p.i
	for p.i < len(p.s) {
		ch := p.s[p.i]
		switch {
		case ch == d:
			p.i++
			return p.s[start : p.i-1], true
		case ch == '\\':
			p.i += 2
		case ch == '\n' && regex:
			return "", false
		case ch == '[' && regex && p.brackets != bracketNone:
			if !p.bracket() {
				return "", false
			}
		default:
			p.i++
		}
	}
	return "", false
}

// bracket skips a bracket expression starting at '['.
func (p *sedParser) bracket() bool {
	p.i++
	if p.peek() == '^' {
		p.i++
	}
	if p.peek() == ']' {
		p.i++
	}
	for p.i < len(p.s) {
		switch ch := p.s[p.i]; {
		case ch == ']':
			p.i++
			return true
		case ch == '\n':
			return false
		case ch == '\\' && p.brackets == bracketEscape:
			p.i += 2
		case ch == '[' && p.i+1 < len(p.s) && strings.IndexByte(":.=", p.s[p.i+1]) >= 0:
			end := strings.Index(p.s[p.i+2:], string(p.s[p.i+1])+"]")
			if end < 0 {
				return false
			}
			p.i += end + 4
		default:
			p.i++
		}
	}
	return false
}

// subst reads s/regex/replacement/flags.
func (p *sedParser) subst() (Class, string, bool) {
	d := p.peek()
	if d == 0 || d == '\n' || d == '\\' {
		return 0, "", false
	}
	p.i++
	if _, ok := p.delimited(d, true); !ok {
		return 0, "", false
	}
	if _, ok := p.delimited(d, false); !ok {
		return 0, "", false
	}
	for p.i < len(p.s) {
		switch ch := p.s[p.i]; {
		case ch == 'g' || ch == 'p' || ch == 'i' || ch == 'I' || ch == 'm' || ch == 'M' || ch >= '0' && ch <= '9':
			p.i++
		case ch == 'e':
			return Unknown, "sed s///e runs the pattern space as a command", true
		case ch == 'w':
			p.toEOL()
			return Write, "sed s///w writes to a file", true
		case strings.IndexByte(" \t\n;}#", ch) >= 0:
			return ReadOnly, "", true
		default:
			return 0, "", false
		}
	}
	return ReadOnly, "", true
}
