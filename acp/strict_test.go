package acp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp"
)

func TestDecodeObject(t *testing.T) {
	known := []string{"optionId", "text", "kind"}
	tests := []struct {
		name   string
		in     string
		closed bool
		ok     bool
	}{
		{"plain", `{"optionId":"a","text":"b"}`, true, true},
		{"empty object", `{}`, true, true},
		{"unknown member open", `{"optionId":"a","x":1}`, false, true},
		{"unknown member closed", `{"optionId":"a","x":1}`, true, false},
		{"duplicate", `{"optionId":"a","optionId":"b"}`, false, false},
		{"duplicate via escape", `{"optionId":"a","option\u0049d":"b"}`, false, false},
		{"case variant", `{"OptionID":"a"}`, false, false},
		{"lower case", `{"optionid":"a"}`, false, false},
		{"case variant of unknown", `{"foo":1,"FOO":2}`, false, false},
		{"Kelvin sign folds to k", "{\"\u212aind\":\"a\"}", false, false},
		{"not an object", `["optionId"]`, true, false},
		{"string", `"x"`, true, false},
		{"invalid", `{"optionId":`, true, false},
		{"trailing data", `{"optionId":"a"} {}`, true, false},
		{"nested keys are not checked", `{"optionId":{"a":1,"a":2}}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := acp.DecodeObject([]byte(tt.in), known, tt.closed)
			if (err == nil) != tt.ok {
				t.Fatalf("DecodeObject(%s) = %v, %v; want ok=%v", tt.in, m, err, tt.ok)
			}
			if err != nil && !errors.Is(err, acp.ErrInvalidParams) {
				t.Fatalf("error %v does not wrap ErrInvalidParams", err)
			}
		})
	}
}

func TestDecodeString(t *testing.T) {
	if s, err := acp.DecodeString([]byte(`"a\u0062"`), "x"); err != nil || s != "ab" {
		t.Fatalf("got %q %v", s, err)
	}
	for _, in := range []string{`null`, `1`, `["a"]`, ``} {
		if _, err := acp.DecodeString([]byte(in), "x"); err == nil {
			t.Errorf("DecodeString(%s) accepted", in)
		}
	}
}

// FuzzDecodeObject: never panics; an accepted object has no two member
// names equal under case folding.
func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{`{"optionId":"a"}`, `{"a":1,"A":2}`, `{"optionId":"a","optionId":"b"}`, `[]`, `{"\u006fptionId":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		m, err := acp.DecodeObject([]byte(in), []string{"optionId", "outcome"}, false)
		if err != nil {
			return
		}
		var names []string
		for k := range m {
			for _, n := range names {
				if strings.EqualFold(k, n) {
					t.Fatalf("accepted %q and %q in %s", k, n, in)
				}
			}
			names = append(names, k)
		}
	})
}
