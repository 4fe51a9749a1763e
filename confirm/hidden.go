package confirm

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/hidden"

	"golang.org/x/text/unicode/runenames"
)

// hiddenTables are the Unicode properties whose characters can hide,
// disguise or reorder the text a person reads: controls (Cc), format
// characters (Cf: zero-width characters, bidi embeddings and isolates,
// tag characters, invisible operators, Arabic number signs, shorthand
// format controls, ...), every space and separator (Zs, Zl, Zp and
// White_Space; U+0020 is excepted in HiddenRune), bidi and join controls,
// variation selectors, the other default-ignorable code points (Hangul
// fillers, U+034F, Khmer inherent vowels, unassigned tag-block code
// points, ...) and noncharacters. Unicode version: unicode.Version.
var hiddenTables = []*unicode.RangeTable{
	unicode.Cc, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp,
	unicode.White_Space, unicode.Bidi_Control, unicode.Join_Control,
	unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point,
	unicode.Noncharacter_Code_Point,
}

// brailleBlank (U+2800 BRAILLE PATTERN BLANK) is a symbol (So) that every
// font draws as an empty cell, so it hides like a space.
const brailleBlank = '\u2800'

// HiddenRune reports whether r can hide, disguise or reorder what a person
// reads on a terminal or a page: a character of hiddenTables (Unicode
// properties Cc, Cf, Zs, Zl, Zp, White_Space, Bidi_Control, Join_Control,
// Variation_Selector, Other_Default_Ignorable_Code_Point,
// Noncharacter_Code_Point) other than U+0020 SPACE, or U+2800 BRAILLE
// PATTERN BLANK. The approval page's script escapes the same set with
// Unicode property escapes (bridge/web/static/app.js, docs/security.md).
func HiddenRune(r rune) bool {
	if r == ' ' {
		return false
	}
	return r == brailleBlank || unicode.In(r, hiddenTables...)
}

// Visible returns s with every HiddenRune written as a Go escape: \uXXXX
// for a code point up to U+FFFF, \UXXXXXXXX above (lowercase hex). Other
// characters, backslashes included, are copied as they are.
func Visible(s string) string {
	i := strings.IndexFunc(s, hidden.Rune)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case !hidden.Rune(r):
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

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
