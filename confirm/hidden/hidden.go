// Package hidden names the characters that can hide, disguise or reorder
// what a person reads on a terminal or a page ([Rune]), and writes them as
// escapes ([Escape]). The broker escapes them in a decision's displayed
// text, acpmux decisions in what it prints, and the approval page's script
// escapes the same set (docs/security.md).
package hidden

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tables are the Unicode properties whose characters can hide,
// disguise or reorder the text a person reads: controls (Cc), format
// characters (Cf: zero-width characters, bidi embeddings and isolates,
// tag characters, invisible operators, Arabic number signs, shorthand
// format controls, ...), every space and separator (Zs, Zl, Zp and
// White_Space; U+0020 is excepted in Rune), bidi and join controls,
// variation selectors, the other default-ignorable code points (Hangul
// fillers, U+034F, Khmer inherent vowels, unassigned tag-block code
// points, ...) and noncharacters. Unicode version: unicode.Version.
var tables = []*unicode.RangeTable{
	unicode.Cc, unicode.Cf, unicode.Zs, unicode.Zl, unicode.Zp,
	unicode.White_Space, unicode.Bidi_Control, unicode.Join_Control,
	unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point,
	unicode.Noncharacter_Code_Point,
}

// brailleBlank (U+2800 BRAILLE PATTERN BLANK) is a symbol (So) that every
// font draws as an empty cell, so it hides like a space.
const brailleBlank = '\u2800'

// Rune reports whether r can hide, disguise or reorder what a person
// reads on a terminal or a page: a character of the Unicode properties Cc,
// Cf, Zs, Zl, Zp, White_Space, Bidi_Control, Join_Control,
// Variation_Selector, Other_Default_Ignorable_Code_Point or
// Noncharacter_Code_Point other than U+0020 SPACE, or U+2800 BRAILLE
// PATTERN BLANK. The approval page's script escapes the same set with
// Unicode property escapes (bridge/web/static/app.js, docs/security.md).
func Rune(r rune) bool {
	if r < utf8.RuneSelf { // ASCII: of these properties only the controls (Cc) and the white space among them
		return r < ' ' || r == 0x7f
	}
	return r == brailleBlank || unicode.In(r, tables...)
}

// Escape returns s with every hidden [Rune] written as a Go escape:
// \uXXXX for a code point up to U+FFFF, \UXXXXXXXX above (lowercase hex).
// Other characters, backslashes included, are copied as they are.
func Escape(s string) string {
	i := strings.IndexFunc(s, Rune)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case !Rune(r):
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}
