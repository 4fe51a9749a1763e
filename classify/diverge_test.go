package classify_test

import (
	"strings"
	"testing"

	"github.com/acpmux/acpmux/classify"
)

// divergeTests are sources where mvdan.cc/sh and bash may disagree on
// where a command, a comment or a here-document body begins or ends, or
// whose text bash decides at run time. Each is Unknown (or Write, when a
// write is also visible), with a reason that names the construct (why)
// and points at it (at: the text of the reason).
var divergeTests = []struct {
	name, src string
	want      classify.Class
	why, at   string
}{
	// Family 1: a comment line that ends in a backslash.
	{"comment ends in backslash", "ls # x \\\ntouch MARK", classify.Unknown, "comment", "# x \\"},
	{"bare comment backslash", "ls #\\\ntouch MARK", classify.Unknown, "comment", "#\\"},
	{"comment backslash in sh -c", "bash -c 'ls # x \\\ntouch MARK'", classify.Unknown, "comment", ""},
	{"comment backslash after continuation", "ls sub \\\n#\\\ntee MARK </dev/null", classify.Unknown, "comment", ""},
	// Family 2: here-document end markers that bash finds after joining
	// backslash-newlines in the body.
	{"heredoc unquoted", "cat <<EOF\nfoo\nEO\\\nF\ntouch MARK\nEOF", classify.Unknown, "here-document body", "\\\n"},
	{"heredoc dash", "cat <<-EOF\n\tfoo\nE\\\nOF\ntouch MARK\nEOF", classify.Unknown, "here-document body", "\\\n"},
	{"heredoc partly quoted", "cat <<'_'X1\n\\\n_X1\n_\\\nX1\ncp a.txt MARK\n_X1", classify.Unknown, "here-document", ""},
	{"heredoc E\"OF\"", "cat <<E\"OF\"\nE\\\nOF\ntouch MARK\nEOF", classify.Unknown, "here-document", ""},
	{"heredoc backslash then delimiter", "cat <<-END-OF | cat\n\\\nEND-OF\nprintf x >MARK\n\tEND-OF", classify.Unknown, "here-document", ""},
	{"heredoc delimiter line with paren", "cat <<END; :\nEND)\nE\\\nND\ntee MARK </dev/null\nEND", classify.Unknown, "here-document", ""},
	{"heredoc in sh -c", "sh -c 'cat <<EOF\nEO\\\nF\ntouch MARK\nEOF'", classify.Unknown, "here-document", ""},
	{"heredoc delimiter with expansion", "cat <<$x\nfoo\n$x", classify.Unknown, "does not parse", ""},
	{"heredoc delimiter $'…'", "cat <<$'E'\nfoo\nE", classify.Unknown, "delimiter", ""},
	{"heredoc delimiter odd byte", "cat <<'E F'\nfoo\nE F", classify.Unknown, "delimiter", ""},
	{"heredoc operator line continues", "cat <<EOF \\\n-n\nfoo\nEOF", classify.Unknown, "here-document", ""},
	{"heredoc operator line has a quoted newline", "cat <<EOF; echo \"a\nb\"\nfoo\nEOF", classify.Unknown, "here-document", ""},
	// Control bytes, NUL and bytes that are not UTF-8.
	{"carriage return", "ls\rtouch MARK", classify.Unknown, "control character", "\r"},
	{"CRLF", "ls\r\n", classify.Unknown, "control character", "\r"},
	{"NUL", "ls\x00; touch MARK", classify.Unknown, "control character", "\x00"},
	{"escape", "ls \x1b[2K", classify.Unknown, "control character", "\x1b"},
	{"DEL", "ls \x7f", classify.Unknown, "control character", "\x7f"},
	{"invalid UTF-8", "ls \xff", classify.Unknown, "UTF-8", "\xff"},
	// Backslash-newline outside plain words.
	{"in double quotes", "echo \"a\\\nb\"", classify.Unknown, "double quotes", "\\\n"},
	{"in single quotes", "echo 'a\\\nb'", classify.Unknown, "single quotes", "\\\n"},
	{"in $'…'", "echo $'a\\\nb'", classify.Unknown, "single quotes", "\\\n"},
	{"in backquotes", "echo `ls \\\n-l`", classify.Unknown, "backquoted", "\\\n"},
	{"in parameter expansion", "echo ${HOME\\\n}", classify.Unknown, "", ""},
	{"in [[ ]]", "[[ -f a \\\n]]", classify.Unknown, "[[ ]]", "\\\n"},
	{"in arithmetic", "echo $((1 +\\\n2))", classify.Unknown, "arithmetic", "\\\n"},
	// Text that bash decides at run time.
	{"locale string", `echo $"hello"`, classify.Unknown, "translated", `$"hello"`},
	{"history expansion", "echo a!b", classify.Unknown, "history expansion", "!"},
	{"history expansion !!", "echo !!", classify.Unknown, "history expansion", "!"},
	{"history in double quotes", `echo "!$"`, classify.Unknown, "history expansion", ""},
	{"set -H", "set -H\necho !!", classify.Unknown, "history", ""},
	{"set -o histexpand", "set -o histexpand", classify.Unknown, "not known to be harmless", "histexpand"},
	{"set -o posix", "set -o posix", classify.Unknown, "not known to be harmless", "posix"},
	{"alias", "alias ls='touch MARK'\nls", classify.Unknown, "alias", ""},
	{"expand_aliases", "shopt -s expand_aliases", classify.Unknown, "not known to be harmless", "expand_aliases"},
	{"extglob on", "shopt -s extglob", classify.Unknown, "not known to be harmless", "extglob"},
	{"extglob pattern", "ls !(a.txt)", classify.Unknown, "extglob", "!(a.txt)"},
	{"extglob pattern @", "ls @(a|b)", classify.Unknown, "extglob", "@(a|b)"},
	{"regex with parens", "[[ x =~ (x|y) ]]", classify.Unknown, "=~", "("},
	{"regex with escaped space", "[[ x =~ x\\ y ]]", classify.Unknown, "=~", "\\"},
	// ;& and ;;& fall through: every branch is classified anyway.
	{"case fallthrough ;&", "case x in x) ls;& y) touch MARK;; esac", classify.Write, "touch", "touch"},
	{"case fallthrough ;;&", "case x in x) ls;;& y) touch MARK;; esac", classify.Write, "touch", "touch"},
	// Arithmetic that bash may read as nested subshells.
	{"(( as subshells", "((ls) ; touch MARK)", classify.Unknown, "", ""},
	{"$(( as subshell", "echo $((ls) ; touch MARK)", classify.Unknown, "", ""},
}

func TestDivergenceGuard(t *testing.T) {
	for _, tt := range divergeTests {
		t.Run(tt.name, func(t *testing.T) {
			v := classify.Command(tt.src)
			if v.Class != tt.want {
				t.Fatalf("Command(%q) = %v, want %v; reasons: %v", tt.src, v.Class, tt.want, v.Reasons)
			}
			for _, r := range v.Reasons {
				if strings.Contains(r.Why, tt.why) && strings.Contains(r.Text, tt.at) {
					if r.Text != tt.src[r.Pos:r.End] {
						t.Fatalf("reason %+v does not point into the input", r)
					}
					return
				}
			}
			t.Fatalf("Command(%q): no reason naming %q at %q; reasons: %v", tt.src, tt.why, tt.at, v.Reasons)
		})
	}
}

// TestDivergenceGuardKeepsPlainForms checks that the guard leaves the
// forms agents use every day read-only: comments, continuation lines
// between words and inside plain words, and here-documents whose body
// bash and the parser delimit alike.
func TestDivergenceGuardKeepsPlainForms(t *testing.T) {
	for _, src := range []string{
		"ls # list the files",
		"# a comment\nls",
		"ls -la \\\n  sub",
		"grep -n alpha \\\n  a.txt | head",
		"l\\\ns",
		"cat <<EOF\nhello $HOME\nEOF",
		"cat <<'EOF'\nhello\nEOF",
		"cat <<\"EOF\"\nhello\nEOF",
		"cat <<\\EOF\nhello\nEOF",
		"cat <<-EOF\n\thello\n\tEOF",
		"cat <<A <<B\na\nA\nb\nB\nls",
		"cat <<EOF | grep x\nx\nEOF\nls",
		"cat <<EOF\nEOF",
		"echo ${#HOME} $#",
		"echo hi!",
		`echo "done!"`,
		"[ ! -f a.txt ] || ls",
		"[[ x =~ ^x+$ ]]",
		"echo a#b",
	} {
		if v := classify.Command(src); v.Class != classify.ReadOnly {
			t.Errorf("Command(%q) = %v, want read-only; reasons: %v", src, v.Class, v.Reasons)
		}
	}
}
