package hidden_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/acpmux/acpmux/confirm/hidden"
)

// TestHiddenRuneNamedCodePoints: every character that can hide or reorder
// text is hidden, including those a hand list missed (U+1680, U+110BD,
// U+1BCA0–U+1BCA3); ordinary text, U+0020 included, is not.
func TestHiddenRuneNamedCodePoints(t *testing.T) {
	tests := []struct {
		name string
		r    rune
		want bool
	}{
		{"NUL", 0x0000, true},
		{"TAB", '\t', true},
		{"LF", '\n', true},
		{"CR", '\r', true},
		{"DEL", 0x007f, true},
		{"NEXT LINE", 0x0085, true},
		{"NO-BREAK SPACE", 0x00a0, true},
		{"SOFT HYPHEN", 0x00ad, true},
		{"COMBINING GRAPHEME JOINER", 0x034f, true},
		{"ARABIC NUMBER SIGN", 0x0600, true},
		{"ARABIC LETTER MARK", 0x061c, true},
		{"HANGUL CHOSEONG FILLER", 0x115f, true},
		{"OGHAM SPACE MARK", 0x1680, true},
		{"KHMER VOWEL INHERENT AQ", 0x17b4, true},
		{"MONGOLIAN FREE VARIATION SELECTOR ONE", 0x180b, true},
		{"MONGOLIAN VOWEL SEPARATOR", 0x180e, true},
		{"EN QUAD", 0x2000, true},
		{"ZERO WIDTH SPACE", 0x200b, true},
		{"ZERO WIDTH JOINER", 0x200d, true},
		{"RIGHT-TO-LEFT MARK", 0x200f, true},
		{"LINE SEPARATOR", 0x2028, true},
		{"PARAGRAPH SEPARATOR", 0x2029, true},
		{"LEFT-TO-RIGHT EMBEDDING", 0x202a, true},
		{"RIGHT-TO-LEFT OVERRIDE", 0x202e, true},
		{"NARROW NO-BREAK SPACE", 0x202f, true},
		{"MEDIUM MATHEMATICAL SPACE", 0x205f, true},
		{"WORD JOINER", 0x2060, true},
		{"INVISIBLE TIMES", 0x2062, true},
		{"LEFT-TO-RIGHT ISOLATE", 0x2066, true},
		{"RIGHT-TO-LEFT ISOLATE", 0x2067, true},
		{"FIRST STRONG ISOLATE", 0x2068, true},
		{"POP DIRECTIONAL ISOLATE", 0x2069, true},
		{"BRAILLE PATTERN BLANK", 0x2800, true},
		{"IDEOGRAPHIC SPACE", 0x3000, true},
		{"HANGUL FILLER", 0x3164, true},
		{"VARIATION SELECTOR-16", 0xfe0f, true},
		{"ZERO WIDTH NO-BREAK SPACE", 0xfeff, true},
		{"HALFWIDTH HANGUL FILLER", 0xffa0, true},
		{"INTERLINEAR ANNOTATION ANCHOR", 0xfff9, true},
		{"noncharacter U+FFFE", 0xfffe, true},
		{"KAITHI NUMBER SIGN", 0x110bd, true},
		{"EGYPTIAN HIEROGLYPH VERTICAL JOINER", 0x13430, true},
		{"SHORTHAND FORMAT LETTER OVERLAP", 0x1bca0, true},
		{"SHORTHAND FORMAT CONTINUING OVERLAP", 0x1bca1, true},
		{"SHORTHAND FORMAT DOWN STEP", 0x1bca2, true},
		{"SHORTHAND FORMAT UP STEP", 0x1bca3, true},
		{"MUSICAL SYMBOL BEGIN BEAM", 0x1d173, true},
		{"LANGUAGE TAG", 0xe0001, true},
		{"TAG LATIN SMALL LETTER A", 0xe0061, true},
		{"CANCEL TAG", 0xe007f, true},
		{"VARIATION SELECTOR-17", 0xe0100, true},
		{"unassigned default-ignorable U+E0FFF", 0xe0fff, true},

		{"SPACE", ' ', false},
		{"LATIN SMALL LETTER A", 'a', false},
		{"HYPHEN-MINUS", '-', false},
		{"LATIN SMALL LETTER E WITH ACUTE", 0x00e9, false},
		{"COMBINING ACUTE ACCENT", 0x0301, false},
		{"CJK IDEOGRAPH 4E2D", 0x4e2d, false},
		{"GRINNING FACE", 0x1f600, false},
		{"REPLACEMENT CHARACTER", 0xfffd, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hidden.Rune(tt.r); got != tt.want {
				t.Errorf("HiddenRune(U+%04X) = %v, want %v", tt.r, got, tt.want)
			}
		})
	}
}

// TestHiddenRuneCoversUnicodeProperties sweeps every code point: each one
// with a property that hides or reorders text (Cc, Cf, a space other than
// U+0020, a separator, bidi or join control, variation selector, other
// default-ignorable, noncharacter, the tag block) is hidden, and Escape
// writes it as an escape that strconv.Unquote turns back into it.
func TestHiddenRuneCoversUnicodeProperties(t *testing.T) {
	props := map[string]*unicode.RangeTable{
		"Cc": unicode.Cc, "Cf": unicode.Cf, "Zs": unicode.Zs, "Zl": unicode.Zl, "Zp": unicode.Zp,
		"White_Space": unicode.White_Space, "Bidi_Control": unicode.Bidi_Control,
		"Join_Control": unicode.Join_Control, "Variation_Selector": unicode.Variation_Selector,
		"Other_Default_Ignorable_Code_Point": unicode.Other_Default_Ignorable_Code_Point,
		"Noncharacter_Code_Point":            unicode.Noncharacter_Code_Point,
	}
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue // surrogates are not in any Go string
		}
		want := ""
		for name, tab := range props {
			if unicode.Is(tab, r) {
				want = name
			}
		}
		if r >= 0xe0000 && r <= 0xe007f {
			want = "tag block"
		}
		if r == ' ' {
			want = ""
		}
		got := hidden.Rune(r)
		if want != "" && !got {
			t.Errorf("U+%04X (%s) is not hidden", r, want)
		}
		if r < 0x80 && got != (want != "") { // Rune's ASCII shortcut, exactly the properties
			t.Errorf("U+%04X: hidden %v, the properties say %q", r, got, want)
		}
		if !got {
			continue
		}
		n++
		esc := hidden.Escape(string(r))
		if strings.ContainsFunc(esc, hidden.Rune) {
			t.Fatalf("Escape(U+%04X) = %q still holds a hidden character", r, esc)
		}
		if u, err := strconv.Unquote(`"` + esc + `"`); err != nil || u != string(r) {
			t.Fatalf("Escape(U+%04X) = %q, which unquotes to %q (%v)", r, esc, u, err)
		}
	}
	if n < 4000 {
		t.Errorf("only %d hidden code points; the default-ignorable ranges alone have more", n)
	}
}
