package store_test

import (
	"encoding/json"
	"testing"

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
