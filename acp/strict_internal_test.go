package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// decodeObjectStd is DecodeObject as it was written on encoding/json's
// Decoder (its tokens and raw values), the reference FuzzDecodeObjectAgrees
// holds the scanner to.
func decodeObjectStd(data []byte, known []string, closed bool) (map[string]json.RawMessage, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrInvalidParams)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidParams)
	}
	out := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
		}
		name, _ := tok.(string)
		if err := checkMemberStd(name, out, known, closed); err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: member %q: %v", ErrInvalidParams, name, err)
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrInvalidParams)
	}
	return out, nil
}

// checkMemberStd is checkMember as it was: each name compared with every
// earlier one by strings.EqualFold.
func checkMemberStd(name string, seen map[string]json.RawMessage, known []string, closed bool) error {
	if _, dup := seen[name]; dup {
		return fmt.Errorf("%w: duplicate member %q", ErrInvalidParams, name)
	}
	for k := range seen {
		if strings.EqualFold(k, name) {
			return fmt.Errorf("%w: members %q and %q differ only in case", ErrInvalidParams, k, name)
		}
	}
	return checkMember(name, map[string]json.RawMessage{}, map[string]string{}, known, closed) // the known and closed rules
}

// FuzzFoldKeyIsEqualFold: foldKey(a) == foldKey(b) exactly when
// strings.EqualFold(a, b).
func FuzzFoldKeyIsEqualFold(f *testing.F) {
	for _, p := range [][2]string{{"k", "\u212a"}, {"s", "\u017f"}, {"optionId", "OPTIONID"}, {"\xff", "\xfe"}, {"ß", "ẞ"}, {"İ", "i"}, {"Σ", "ς"}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if (foldKey(a) == foldKey(b)) != strings.EqualFold(a, b) {
			t.Fatalf("foldKey(%q) = %q, foldKey(%q) = %q; EqualFold %v", a, foldKey(a), b, foldKey(b), strings.EqualFold(a, b))
		}
	})
}

// TestManyMembersAreCheckedWithoutComparingPairs: an object of 200,000
// members (a host's set_mode params, say) is checked with a map lookup a
// name, not a comparison with every name before it (which took minutes at
// this size), and a case clash far apart is still found.
func TestManyMembersAreCheckedWithoutComparingPairs(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 200000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"m%d":%d`, i, i)
	}
	b.WriteString(`,"M7":1}`)
	_, err := DecodeObject([]byte(b.String()), nil, false)
	if err == nil || !strings.Contains(err.Error(), `members "m7" and "M7" differ only in case`) {
		t.Fatalf("err %v, want the case clash of m7 and M7", err)
	}
}

// FuzzDecodeObjectAgrees: DecodeObject accepts what the encoding/json
// decoder accepted, with the same members and raw values, and refuses
// what it refused, with the same message (past "invalid params"), for
// data nested no deeper than MaxDepth.
func FuzzDecodeObjectAgrees(f *testing.F) {
	for _, s := range []string{`{"optionId":"a"}`, `{"a":1,"A":2}`, `{"optionId":"a","optionId":"b"}`, `[]`,
		`{"\u006fptionId":1}`, ` { "outcome" : {"x":[1,2,{"y":null}]} , "b":"\u00e9\n" } `, "{\"k\xff\":1}",
		`{"optionid":1}`, `{"ſ":1,"s":2}`, `{}`, `{"a":"\ud800"}`, `"x"`, `{"a":1}x`, `{"a" 1}`} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, closed bool) {
		if strings.Count(in, "[")+strings.Count(in, "{") > MaxDepth {
			return
		}
		known := []string{"optionId", "outcome", "s"}
		want, wantErr := decodeObjectStd([]byte(in), known, closed)
		got, err := DecodeObject([]byte(in), known, closed)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("DecodeObject(%q) error %v; encoding/json's %v", in, err, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("DecodeObject(%q) = %q; encoding/json's %q", in, got, want)
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("DecodeObject(%q)[%q] = %q; encoding/json's %q", in, k, got[k], v)
			}
		}
	})
}

// FuzzDecodeStringAgrees: DecodeString's fast path returns what
// json.Unmarshal does.
func FuzzDecodeStringAgrees(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\u0062"`, `"é"`, "\"\xff\"", `"a`, `"a\"`, `1`, `""`, `"\n"`, "\"\x01\"", `"a" `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := DecodeString(json.RawMessage(in), "x")
		var want string
		wantErr := json.Unmarshal([]byte(in), &want)
		if len(in) == 0 || in[0] != '"' {
			wantErr = errors.New("not a string")
		}
		if (err == nil) != (wantErr == nil) || got != want && err == nil {
			t.Fatalf("DecodeString(%q) = %q, %v; json.Unmarshal: %q, %v", in, got, err, want, wantErr)
		}
	})
}
