package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
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
// Member values are not validated beyond being JSON. Safe for concurrent use.
// encoding/json matches member names case-insensitively and keeps the last
// of duplicate members, so a lax decode would read what other peers ignore.
func DecodeObject(data []byte, known []string, closed bool) (map[string]json.RawMessage, error) {
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
		name, _ := tok.(string) // a member name is always a string token here
		if err := checkMember(name, out, known, closed); err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: member %q: %v", ErrInvalidParams, name, err)
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrInvalidParams)
	}
	return out, nil
}

// checkMember applies DecodeObject's rules to one member name.
func checkMember(name string, seen map[string]json.RawMessage, known []string, closed bool) error {
	if _, dup := seen[name]; dup {
		return fmt.Errorf("%w: duplicate member %q", ErrInvalidParams, name)
	}
	for k := range seen {
		if strings.EqualFold(k, name) {
			return fmt.Errorf("%w: members %q and %q differ only in case", ErrInvalidParams, k, name)
		}
	}
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
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", fmt.Errorf("%w: %s must be a string", ErrInvalidParams, what)
	}
	return s, nil
}
