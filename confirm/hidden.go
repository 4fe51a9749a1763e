package confirm

import (
	"fmt"
	"strings"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/hidden"

	"golang.org/x/text/unicode/runenames"
)

// maxHiddenNamed is how many distinct hidden characters a warning names.
const maxHiddenNamed = 8

// hiddenNames returns the distinct hidden characters of s in the order
// they first appear, each as "U+202E RIGHT-TO-LEFT OVERRIDE" (the Unicode
// name, or "U+XXXX" alone for a code point without one), at most
// maxHiddenNamed of them plus "and N more". Tab and line feed are layout,
// not hidden, and are left out. It returns nil when there is none.
func hiddenNames(s string) []string {
	var names []string
	seen := map[rune]bool{}
	for _, r := range s {
		if r == '\t' || r == '\n' || !hidden.Rune(r) || seen[r] {
			continue
		}
		seen[r] = true
		if len(names) < maxHiddenNamed {
			names = append(names, runeName(r))
		}
	}
	if n := len(seen) - len(names); n > 0 {
		names = append(names, fmt.Sprintf("and %d more", n))
	}
	return names
}

// runeName is "U+XXXX NAME", or "U+XXXX" when Unicode gives r no name
// (controls have none; runenames calls them "<control>").
func runeName(r rune) string {
	n := runenames.Name(r)
	if n == "" || strings.HasPrefix(n, "<") {
		return fmt.Sprintf("U+%04X", r)
	}
	return fmt.Sprintf("U+%04X %s", r, n)
}

// hiddenWarnings returns the warnings for hidden characters in the command
// and in the title of a decision: one each, naming the characters, the
// title's only when it is not the command itself.
func hiddenWarnings(title, command string) []string {
	var ws []string
	if names := hiddenNames(command); names != nil {
		ws = append(ws, gate.WarningHiddenInCommand+strings.Join(names, ", "))
	}
	if title != command {
		if names := hiddenNames(title); names != nil {
			ws = append(ws, gate.WarningHiddenInTitle+strings.Join(names, ", "))
		}
	}
	return ws
}
