package classify

import (
	"strings"
)

// findValued are find primaries that take one value.
var findValued = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-type": true, "-xtype": true,
	"-size": true, "-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true, "-cmin": true,
	"-newer": true, "-anewer": true, "-cnewer": true, "-used": true, "-perm": true, "-user": true,
	"-group": true, "-uid": true, "-gid": true, "-links": true, "-inum": true, "-samefile": true,
	"-maxdepth": true, "-mindepth": true, "-fstype": true, "-printf": true, "-regextype": true,
	"-context": true, "-files0-from": true,
}

// findPlain are find primaries and operators without a value that only
// test or print.
var findPlain = map[string]bool{
	"-print": true, "-print0": true, "-ls": true, "-prune": true, "-quit": true, "-true": true, "-false": true,
	"-empty": true, "-executable": true, "-readable": true, "-writable": true, "-nouser": true, "-nogroup": true,
	"-depth": true, "-d": true, "-xdev": true, "-mount": true, "-follow": true, "-noleaf": true, "-daystart": true,
	"-ignore_readdir_race": true, "-noignore_readdir_race": true, "-warn": true, "-nowarn": true,
	"-help": true, "--help": true, "-version": true, "--version": true,
	"(": true, ")": true, "!": true, "-not": true, "-a": true, "-and": true, "-o": true, "-or": true, ",": true,
}

// findWrites are find primaries that write files.
var findWrites = map[string]int{"-delete": 0, "-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}

// findCmd classifies find. Starting points and expressions are read as
// GNU find does; -exec and friends classify the command they run, with
// {} standing for a path (which never starts with '-').
func findCmd(c *classifier, x *cmd) {
	mark := c.mark()
	args := x.args
	i := 0
	// Leading options.
	for i < len(args) && args[i].static {
		s := args[i].text
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-O") {
			i++
			continue
		}
		if s == "-D" {
			i += 2
			continue
		}
		break
	}
	// Starting points: until a word that starts an expression.
	for ; i < len(args); i++ {
		a := args[i]
		if a.mayBeOption() {
			c.argAt(Unknown, a, "argument decided at run time may be a find primary, such as -delete")
			return
		}
		if a.static && (strings.HasPrefix(a.text, "-") || a.text == "(" || a.text == "!") {
			break
		}
	}
	for i < len(args) {
		a := args[i]
		i++
		if !a.static {
			c.argAt(Unknown, a, "argument decided at run time may be a find primary, such as -delete")
			return
		}
		s := a.text
		switch {
		case findPlain[s]:
		case findValued[s] || isFindNewerXY(s):
			if i < len(args) && args[i].multi && args[i].free {
				c.argAt(Unknown, args[i], "value is split at run time and may add primaries")
				return
			}
			i++
		case s == "-exec" || s == "-execdir" || s == "-ok" || s == "-okdir":
			n, ok := c.findExec(a, args[i:])
			if !ok {
				return
			}
			i += n
		default:
			if n, ok := findWrites[s]; ok {
				c.argAt(Write, a, "find "+s+" writes or deletes files")
				i += n
				continue
			}
			c.argAt(Unknown, a, "find primary not in the table of known primaries")
			return
		}
	}
	c.finishArg(mark, x.at, "find lists files")
}

func isFindNewerXY(s string) bool {
	return len(s) == 8 && strings.HasPrefix(s, "-newer") &&
		strings.IndexByte("amctB", s[6]) >= 0 && strings.IndexByte("amctB", s[7]) >= 0
}

// findExec classifies the command of -exec and returns how many words it
// used, up to and including the terminating ";" or "+".
func (c *classifier) findExec(at arg, args []arg) (int, bool) {
	for j, a := range args {
		if !a.static {
			if a.text == "" || a.free {
				c.argAt(Unknown, a, "word decided at run time may end find "+at.text+" early (as ; or +), making the rest primaries")
				return 0, false
			}
			continue
		}
		if a.text == ";" || (a.text == "+" && j > 0 && args[j-1].is("{}")) {
			if j == 0 {
				c.argAt(Unknown, at, "find "+at.text+" without a command")
				return 0, false
			}
			cmd := make([]arg, j)
			for k, w := range args[:j] {
				cmd[k] = findPath(w)
			}
			if !cmd[0].static {
				c.argAt(Unknown, args[0], "find "+at.text+" runs a program decided at run time")
				return 0, false
			}
			if at.text == "-execdir" || at.text == "-okdir" {
				c.res.cd = true // the command runs in each match's directory
			}
			c.exec(cmd)
			return j + 1, true
		}
	}
	c.argAt(Unknown, at, "find "+at.text+" without a terminating ; or +")
	return 0, false
}

// findPath turns a word containing {} into the path find puts there: not
// static, but its value starts with the text before {} or with "./".
func findPath(a arg) arg {
	if !a.static || !strings.Contains(a.text, "{}") {
		return a
	}
	pre, _, _ := strings.Cut(a.text, "{}")
	if pre == "" {
		pre = "./"
	}
	return arg{text: pre, pos: a.pos, end: a.end}
}
