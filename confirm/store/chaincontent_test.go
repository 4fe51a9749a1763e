package store_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/acpmux/acpmux/confirm/store"
)

// TestChainContentIsTheJSONArray: ChainContent is byte for byte
// json.Marshal of the table and the fields as one array (the form rows
// were chained in), for strings that JSON escapes (HTML characters,
// U+2028, invalid UTF-8, control bytes) and integers of either sign.
func TestChainContentIsTheJSONArray(t *testing.T) {
	for _, fields := range [][]any{
		{"d-1", int64(2), int64(-1796143725201814525), "presented", "http", "", ""},
		{"<script>&amp;", "\u2028\u2029", "bad\xffutf8", "tab\tnl\n\x00", int(7), int64(0)},
		{},
	} {
		want, err := json.Marshal(append([]any{store.ChainDecisionEvents}, fields...))
		if err != nil {
			t.Fatal(err)
		}
		if got := store.ChainContent(store.ChainDecisionEvents, fields...); string(got) != string(want) {
			t.Fatalf("ChainContent %q, want json.Marshal's %q", got, want)
		}
	}
}

// FuzzChainContentIsTheJSONArray: ChainContent of any two strings and an
// integer is json.Marshal's array of them.
func FuzzChainContentIsTheJSONArray(f *testing.F) {
	f.Add("d-1", "presented", int64(3))
	f.Add("<a>&", "\x7f\u2028\xff", int64(-1))
	f.Fuzz(func(t *testing.T, a, b string, n int64) {
		want, _ := json.Marshal([]any{store.ChainPlanItems, a, n, b})
		if got := store.ChainContent(store.ChainPlanItems, a, n, b); string(got) != string(want) {
			t.Fatalf("ChainContent %q, want json.Marshal's %q", got, want)
		}
	})
}

// TestChainContentEscapesAsJSONDoes: the string encoding matches
// json.Marshal's for every rune, every string of one or two bytes (each
// control byte, HTML character and lone or cut UTF-8 byte, alone and next
// to another), every rune between two ASCII letters, and 100,000 random
// strings of up to 12 bytes biased to the bytes JSON escapes.
func TestChainContentEscapesAsJSONDoes(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, _ := json.Marshal([]any{store.ChainVotes, s})
		if got := store.ChainContent(store.ChainVotes, s); string(got) != string(want) {
			t.Fatalf("ChainContent of %q: %q, want json.Marshal's %q", s, got, want)
		}
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		check(string(r))
		if r < 0x3000 || r%97 == 0 {
			check("a" + string(r) + "b")
		}
	}
	for i := range 1 << 16 {
		check(string([]byte{byte(i)}))
		check(string([]byte{byte(i >> 8), byte(i)}))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("a\"\\<>&\x00\x1f\x7f\x80\xbf\xc2\xe2\x80\xa8\xed\xf0\xff\t\n")
	for range 100_000 {
		b := make([]byte, rng.IntN(13))
		for i := range b {
			if rng.IntN(2) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = byte(rng.IntN(256))
			}
		}
		check(string(b))
	}
}

// TestChainContentPinsTheEscapes: the escapes of the canonical content,
// written out, as rows were chained since the chain began (encoding/json's
// output without GOEXPERIMENT=jsonv2, which writes invalid UTF-8 as the
// raw replacement character instead): a change of encoding/json must not
// change what rows hash to.
func TestChainContentPinsTheEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"plain ~":                `"plain ~"`,
		"<a href=\"x\">&":        `"\u003ca href=\"x\"\u003e\u0026"`,
		"back\\slash":            `"back\\slash"`,
		"\b\f\n\r\t":             `"\b\f\n\r\t"`,
		"\x00\x01\x1f":           `"\u0000\u0001\u001f"`,
		"\x7f":                   "\"\x7f\"",
		"\x80 \xff \xed\xa0\x80": `"\ufffd \ufffd \ufffd\ufffd\ufffd"`,
		"\u2028\u2029":           `"\u2028\u2029"`,
		"é 日本 😀 \ufffd":          "\"é 日本 😀 \ufffd\"",
	} {
		if got := store.ChainContent(store.ChainVotes, in); string(got) != `["votes",`+want+`]` {
			t.Errorf("ChainContent of %q: %s, want [\"votes\",%s]", in, got, want)
		}
	}
}
