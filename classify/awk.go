package classify

import (
	"strings"
)

var awkOpts = parseOpts(`-F: --field-separator: -v: --assign: -b --characters-as-bytes -c --traditional
	-C --copyright -g --gen-pot -h --help -L:: --lint:: -M --bignum -N --use-lc-numeric -n --non-decimal-data
	-O --optimize -P --posix -r --re-interval -s --no-optimize -S --sandbox -t --lint-old -V --version
	-e: --source:
	-f:!u --file:!u -E:!u --exec:!u -i:!u --include:!u -l:!u --load:!u -W:!u -D::!u --debug::!u
	-d::!w --dump-variables::!w -o::!w --pretty-print::!w -p::!w --profile::!w`)

// awkCmd classifies awk: the program text decides. system(), getline,
// pipes and print redirections write or run commands.
func awkCmd(c *classifier, x *cmd) {
	mark := c.mark()
	var progs []arg
	var ops []arg
	for it := range c.options(getopt{t: awkOpts, args: x.args, stop: true}, &ops) {
		switch {
		case it.opt.class == Write:
			c.argAt(Write, it.at, "awk "+it.opt.name+" writes a file")
		case (it.opt.name == "-i" || it.opt.name == "--include") && (it.val.is("inplace") || it.val.is("inplace.awk")):
			c.argAt(Write, it.at, "gawk -i inplace edits files in place")
		case it.opt.class == Unknown:
			c.argAt(Unknown, it.at, "awk "+it.opt.name+" loads program text or code from a file")
		case it.opt.name == "-e" || it.opt.name == "--source":
			progs = append(progs, it.val)
		}
	}
	if len(progs) == 0 && !c.raised(mark) {
		if len(ops) == 0 {
			c.argAt(Unknown, x.span(), "awk without a program")
			return
		}
		progs = ops[:1]
	}
	for _, p := range progs {
		if !p.static {
			c.argAt(Unknown, p, "awk program decided at run time")
			continue
		}
		if class, why := awkProgram(p.text); class != ReadOnly {
			c.argAt(class, p, why)
		}
	}
	c.finishArg(mark, x.at, "awk prints processed text")
}

// awkProgram classifies awk program text by its tokens. It does not
// parse awk; it errs towards Unknown: any system, getline or close,
// any | that is not ||, any @ directive, and any > inside a print or
// printf statement outside parentheses.
func awkProgram(s string) (Class, string) {
	class, why := ReadOnly, ""
	raise := func(c Class, w string) {
		if c.rank() > class.rank() {
			class, why = c, w
		}
	}
	// operand: the previous token ends an operand, so '/' divides.
	operand := false
	inPrint, depth, printDepth := false, 0, 0
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			i++
			continue
		case ch == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2
			continue
		case ch == '\n' || ch == ';' || ch == '{' || ch == '}':
			if depth == printDepth {
				inPrint = false
			}
			i++
			operand = false
			continue
		case ch == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			continue
		case ch == '"':
			j, ok := awkString(s, i)
			if !ok {
				return Unknown, "awk string the classifier cannot read"
			}
			i, operand = j, true
			continue
		case ch == '/' && !operand:
			j, ok := awkRegex(s, i)
			if !ok {
				return Unknown, "awk regex the classifier cannot read"
			}
			// Should the regex really be a division, its text is code.
			if body := s[i:j]; strings.Contains(body, "system") || strings.Contains(body, "getline") || strings.Contains(body, "close") {
				raise(Unknown, "awk regex holds words that would run commands if it were code")
			}
			i, operand = j, true
			continue
		case isAwkIdentStart(ch):
			j := i
			for j < len(s) && isAwkIdent(s[j]) {
				j++
			}
			switch word := s[i:j]; word {
			case "system":
				raise(Unknown, "awk system() runs a command")
			case "getline":
				raise(Unknown, "awk getline reads from files or commands")
			case "close":
				raise(Unknown, "awk close() waits for commands")
			case "print", "printf":
				inPrint, printDepth = true, depth
				operand = false
				i = j
				continue
			case "return", "in", "case", "do", "else":
				operand = false
				i = j
				continue
			}
			i, operand = j, true
			continue
		case ch >= '0' && ch <= '9' || ch == '.':
			for i < len(s) && (isAwkIdent(s[i]) || s[i] == '.') {
				i++
			}
			operand = true
			continue
		case (ch == '+' || ch == '-') && i+1 < len(s) && s[i+1] == ch:
			// ++ and -- after an operand are postfix: the result is an
			// operand, so a following '/' divides.
			i += 2
			continue
		case ch == '@':
			raise(Unknown, "awk @ directives load code or call functions indirectly")
		case ch == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				i += 2
				operand = false
				continue
			}
			raise(Unknown, "awk | runs a command")
		case ch == '(' || ch == '[':
			depth++
		case ch == ')' || ch == ']':
			depth--
			i++
			operand = true
			continue
		case ch == '>' && inPrint && depth == printDepth:
			j := i + 1
			if j < len(s) && s[j] == '>' {
				j++
			}
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j < len(s) && s[j] == '"' {
				end, ok := awkString(s, j)
				if ok {
					switch s[j+1 : end-1] {
					case "/dev/stdout", "/dev/stderr", "/dev/null", "-":
					default:
						raise(Write, "awk print > FILE writes the file")
					}
					i, operand = end, true
					continue
				}
			}
			raise(Unknown, "awk print > writes to a file named at run time")
		}
		i++
		operand = false
	}
	return class, why
}

// awkString returns the offset after the string literal at s[i].
func awkString(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}

// awkRegex returns the offset after the regex literal at s[i]. The regex
// ends at the first unescaped '/', even inside brackets: reading it
// shorter only makes more of the program look like code.
func awkRegex(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '/':
			return j + 1, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}

func isAwkIdentStart(ch byte) bool {
	return ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z'
}

func isAwkIdent(ch byte) bool { return isAwkIdentStart(ch) || ch >= '0' && ch <= '9' }

// busyboxCmd classifies busybox APPLET as the applet.
func busyboxCmd(c *classifier, x *cmd) {
	if len(x.args) == 0 || !x.args[0].static || strings.HasPrefix(x.args[0].text, "-") {
		c.argAt(Unknown, x.span(), "busybox without a known applet")
		return
	}
	c.exec(x.args)
}
