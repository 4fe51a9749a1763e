package acp_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/acpmux/acpmux/acp"
)

var deleteMetaTests = []struct {
	name, in, want string
	n              int
}{
	{"none", `{"_meta":{"other":1},"acpmux":2}`, `{"_meta":{"other":1},"acpmux":2}`, 0},
	{"only member", `{"a":1,"_meta":{"acpmux":{"x":[1,{"y":2}]}}}`, `{"a":1,"_meta":{}}`, 1},
	{"first of two", `{"_meta":{ "acpmux" : 1 , "k":2}}`, `{"_meta":{ "k":2}}`, 1},
	{"last of two", `{"_meta":{"k":2, "acpmux":1 }}`, `{"_meta":{"k":2 }}`, 1},
	{"middle", `{"_meta":{"a":1,"acpmux":1,"b":2}}`, `{"_meta":{"a":1,"b":2}}`, 1},
	{"duplicates", `{"_meta":{"acpmux":1,"k":[],"acpmux":2,"acpmux":3}}`, `{"_meta":{"k":[]}}`, 3},
	{"escaped key", `{"\u005fmeta":{"\u0061cpmux":{"warnings":[]},"z":0}}`, `{"\u005fmeta":{"z":0}}`, 1},
	{"nested levels", `{"sessionId":"s","_meta":{"acpmux":1},"update":{"content":[{"_meta":{"k":{"_meta":{"acpmux":2}},"acpmux":3}}]}}`,
		`{"sessionId":"s","_meta":{},"update":{"content":[{"_meta":{"k":{"_meta":{}}}}]}}`, 3},
	{"not under _meta", `{"meta":{"acpmux":1},"x":{"acpmux":2},"t":"\"_meta\":{\"acpmux\":1}"}`, `{"meta":{"acpmux":1},"x":{"acpmux":2},"t":"\"_meta\":{\"acpmux\":1}"}`, 0},
	{"_meta not an object", `{"_meta":["acpmux",{"acpmux":1}],"b":"acpmux"}`, `{"_meta":["acpmux",{"acpmux":1}],"b":"acpmux"}`, 0},
}

func TestDeleteMetaMembersCutsOnlyThoseMembers(t *testing.T) {
	for _, tt := range deleteMetaTests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := acp.DeleteMetaMembers([]byte(tt.in), "acpmux")
			if string(got) != tt.want || n != tt.n {
				t.Errorf("got %s (%d removed)\nwant %s (%d)", got, n, tt.want, tt.n)
			}
		})
	}
}

// FuzzDeleteMetaMembers: the result is valid JSON with no _meta.acpmux
// anywhere, and (for input without duplicate keys) equal as a JSON value to
// the input with those members deleted.
func FuzzDeleteMetaMembers(f *testing.F) {
	for _, tt := range deleteMetaTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !json.Valid([]byte(in)) {
			return
		}
		out, _ := acp.DeleteMetaMembers([]byte(in), "acpmux")
		var got any
		if err := decodeNumbers(out, &got); err != nil {
			t.Fatalf("invalid result %q from %q", out, in)
		}
		if hasMetaMember(got, false) {
			t.Fatalf("_meta.acpmux left in %q", out)
		}
		if acp.DuplicateKey([]byte(in)) != "" {
			return
		}
		var want any
		decodeNumbers([]byte(in), &want)
		deleteMeta(want, false)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("got %s, want %v", out, want)
		}
	})
}

// decodeNumbers decodes keeping numbers as text (1e400 is valid JSON).
func decodeNumbers(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func hasMetaMember(v any, inMeta bool) bool {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["acpmux"]; ok && inMeta {
			return true
		}
		for k, x := range v {
			if hasMetaMember(x, k == "_meta") {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasMetaMember(x, false) {
				return true
			}
		}
	}
	return false
}

func deleteMeta(v any, inMeta bool) {
	switch v := v.(type) {
	case map[string]any:
		if inMeta {
			delete(v, "acpmux")
		}
		for k, x := range v {
			deleteMeta(x, k == "_meta")
		}
	case []any:
		for _, x := range v {
			deleteMeta(x, false)
		}
	}
}

func TestMemberSpansFindsEveryDuplicate(t *testing.T) {
	obj := []byte(`{"protocolVersion":2,"x":{"protocolVersion":9},"\u0070rotocolVersion" : 3 }`)
	var got []string
	for _, s := range acp.MemberSpans(obj, "protocolVersion") {
		got = append(got, string(s.Bytes(obj)))
	}
	if want := []string{"2", "3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzMetaNamesCoversDeleteMetaMembers: whenever Parse reports no member
// that could be _meta (MetaNames false), DeleteMetaMembers finds nothing to
// remove in the line, its params or its result, so a relay may skip it.
func FuzzMetaNamesCoversDeleteMetaMembers(f *testing.F) {
	for _, tt := range deleteMetaTests {
		f.Add(`{"jsonrpc":"2.0","method":"m","params":` + tt.in + `}`)
		f.Add(`{"jsonrpc":"2.0","id":1,"result":` + tt.in + `}`)
	}
	for _, tt := range parseTests {
		f.Add(tt.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		b := []byte(line)
		env, err := acp.Parse(b)
		if err != nil || env.MetaNames {
			return
		}
		for _, v := range [][]byte{b, env.Params.Bytes(b), env.Result.Bytes(b)} {
			if v == nil {
				continue
			}
			if _, n := acp.DeleteMetaMembers(v, "acpmux"); n != 0 {
				t.Fatalf("MetaNames false, but DeleteMetaMembers removes %d members of %q", n, v)
			}
		}
	})
}

func TestParseReportsMetaNames(t *testing.T) {
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"_meta acpmux"}}}}`: false,
		`{"jsonrpc":"2.0","method":"m","params":{"a":[{"b":{"_meta":{}}}]}}`:                                                                                                      true,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"content":{"_meta":1}}}}`:                                                                 true,
		`{"jsonrpc":"2.0","id":1,"result":{"\u005fmeta":{"acpmux":1}}}`:                                                                                                           true,
		`{"jsonrpc":"2.0","id":1,"result":{"x\n":1}}`:                                                                                                                             true,
		`{"jsonrpc":"2.0","id":1,"result":{"meta":{"acpmux":1}}}`:                                                                                                                 false,
	} {
		env, err := acp.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		if env.MetaNames != want {
			t.Errorf("MetaNames of %s = %v, want %v", line, env.MetaNames, want)
		}
	}
}
