package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DecodeObject decodes data, which must be exactly one JSON object, into its
// members keyed by their exact (unescaped) names, each value kept raw.
//
// It exists because encoding/json matches object keys case-insensitively and
// keeps the last of duplicate keys, so {"optionId":"a","OptionID":"b"} reads
// as "b" in Go while a JavaScript or Rust peer reads "a". For
// security-relevant objects (a permission outcome, an answer) that parser
// difference must be an error, not a choice. DecodeObject fails when data is
// not a single JSON object, when a member name occurs twice (after unescaping
// "\u0064" and the like), when a member name equals one of known under
// Unicode case folding (strings.EqualFold, so also "ſ" for "s" and the Kelvin
// sign for "k") without being identical, and, when closed is true, when a
// member is not in known. Every error wraps ErrInvalidParams (-32602).
// Member values are not validated beyond being JSON; they are copies (they
// outlive data). Data nested deeper than MaxDepth is refused, as the relay
// refuses it. Safe for concurrent use.
// encoding/json matches member names case-insensitively and keeps the last
// of duplicate members, so a lax decode would read what other peers ignore.
func DecodeObject(data []byte, known []string, closed bool) (map[string]json.RawMessage, error) {
	if !valid(data) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrInvalidParams)
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidParams)
	}
	// One copy for every value, so that the values outlive data (which
	// may be a lent read buffer) at the cost of one allocation.
	data = bytes.Clone(data)
	out := make(map[string]json.RawMessage)
	folded := make(map[string]string) // foldKey of each member name → the name
	for i = skipSpace(data, i+1); i < len(data) && data[i] == '"'; {
		kEnd := skipString(data, i)
		name := memberName(data[i:kEnd]) // meta.go
		if err := checkMember(name, out, folded, known, closed); err != nil {
			return nil, err
		}
		i = skipSpace(data, skipSpace(data, kEnd)+1) // past the ':'
		vEnd := skipValue(data, i)
		out[name] = json.RawMessage(data[i:vEnd:vEnd])
		if i = skipSpace(data, vEnd); data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return out, nil
}

// checkMember applies DecodeObject's rules to one member name: seen holds
// the members so far, folded their names by foldKey (and gets name's), so
// that the check costs the same whatever the number of members before it.
func checkMember(name string, seen map[string]json.RawMessage, folded map[string]string, known []string, closed bool) error {
	if _, dup := seen[name]; dup {
		return fmt.Errorf("%w: duplicate member %q", ErrInvalidParams, name)
	}
	key := foldKey(name)
	if k, ok := folded[key]; ok {
		return fmt.Errorf("%w: members %q and %q differ only in case", ErrInvalidParams, k, name)
	}
	folded[key] = name
	exact := false
	for _, k := range known {
		if k == name {
			exact = true
			break
		}
		if strings.EqualFold(k, name) {
			return fmt.Errorf("%w: member %q must be spelled %q", ErrInvalidParams, name, k)
		}
	}
	if closed && !exact {
		return fmt.Errorf("%w: unknown member %q", ErrInvalidParams, name)
	}
	return nil
}

// DecodeString decodes raw, which must be a JSON string (not null), into s.
// The error wraps ErrInvalidParams and names the member what.
func DecodeString(raw json.RawMessage, what string) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && skipString(raw, 0) == len(raw) && plainString(raw[1:len(raw)-1]) {
		return string(raw[1 : len(raw)-1]), nil // what json.Unmarshal would return, without its reflection
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%w: %s must be a string", ErrInvalidParams, what)
	}
	return s, nil
}

// foldKey returns s with each rune replaced by the least rune of its
// Unicode simple case folding orbit (unicode.SimpleFold), and each byte
// that is not UTF-8 by U+FFFD, so that foldKey(a) == foldKey(b) exactly
// when strings.EqualFold(a, b).
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s) // an ASCII letter's least fold is its upper case
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s { // an invalid byte is U+FFFD, as EqualFold reads it
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// plainString reports whether b, the bytes between the quotes of a JSON
// string, decode to themselves: no escape, no control character (which
// JSON forbids unescaped), valid UTF-8 (encoding/json replaces invalid
// bytes with U+FFFD).
func plainString(b []byte) bool {
	ascii := true
	for _, c := range b {
		if c == '\\' || c < 0x20 {
			return false
		}
		ascii = ascii && c < 0x80
	}
	return ascii || utf8.Valid(b)
}
