package acp

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Member returns the span of the value of member name in the JSON object
// that obj (a part of a valid JSON text, such as Envelope.Params.Bytes)
// holds, or the zero Span when obj is not an object or has no such member.
// The span is relative to obj. With duplicate members the first wins; the
// bridge only uses Member for routing and display, never to read an answer.
func Member(obj []byte, name string) Span {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return Span{}
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kEnd := skipString(obj, i)
		key := obj[i+1 : kEnd-1]
		match := string(key) == name
		if !match && bytes.IndexByte(key, '\\') >= 0 {
			var s string
			match = json.Unmarshal(obj[i:kEnd], &s) == nil && s == name
		}
		i = skipSpace(obj, kEnd)
		i = skipSpace(obj, i+1)
		vEnd := skipValue(obj, i)
		if match {
			return Span{i, vEnd}
		}
		i = skipSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return Span{}
}

// MemberBytes is Member returning the value's bytes (nil when absent).
func MemberBytes(obj []byte, name string) []byte { return Member(obj, name).Bytes(obj) }

// StringValue decodes raw when it is a JSON string; ok is false otherwise.
func StringValue(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	return s, json.Unmarshal(raw, &s) == nil
}

// MemberString returns the string value of member name of obj, or "".
func MemberString(obj []byte, name string) string {
	s, _ := StringValue(MemberBytes(obj, name))
	return s
}

// Members finds the members names of the JSON object obj in one pass: the
// span (relative to obj) of names[i]'s value goes to spans[i] (zero when
// absent; len(spans) must be len(names)). It reports whether obj is an
// object and whether it has members other than names. Keys are compared as
// written (escaped keys never match).
func Members(obj []byte, names []string, spans []Span) (isObject, others bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false, false
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kEnd := skipString(obj, i)
		key := obj[i+1 : kEnd-1]
		i = skipSpace(obj, kEnd)
		i = skipSpace(obj, i+1)
		vEnd := skipValue(obj, i)
		found := false
		for n, name := range names {
			if string(key) == name {
				if !spans[n].Present() {
					spans[n] = Span{i, vEnd}
				}
				found = true
				break
			}
		}
		others = others || !found
		i = skipSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return true, others
}

// DuplicateKey returns the first member name that appears twice in one
// object anywhere in the JSON value v (keys compared after unescaping), or
// "" when there is none. v must be valid JSON. Parsers disagree on
// duplicates (Go and JavaScript keep the last, others the first), so a
// security-relevant object with one is refused rather than read.
func DuplicateKey(v []byte) string {
	_, dup := dupScan(v, skipSpace(v, 0))
	return dup
}

// dupScan checks the value at v[i] and returns the index after it.
func dupScan(v []byte, i int) (int, string) {
	if i >= len(v) {
		return i, ""
	}
	switch v[i] {
	case '{':
		seen := map[string]bool{}
		i = skipSpace(v, i+1)
		for i < len(v) && v[i] == '"' {
			kEnd := skipString(v, i)
			key := string(v[i+1 : kEnd-1])
			if strings.IndexByte(key, '\\') >= 0 {
				json.Unmarshal(v[i:kEnd], &key)
			}
			if seen[key] {
				return len(v), key
			}
			seen[key] = true
			i = skipSpace(v, skipSpace(v, kEnd)+1)
			var dup string
			if i, dup = dupScan(v, i); dup != "" {
				return i, dup
			}
			i = skipSpace(v, i)
			if i < len(v) && v[i] == ',' {
				i = skipSpace(v, i+1)
			}
		}
		return i + 1, ""
	case '[':
		i = skipSpace(v, i+1)
		for i < len(v) && v[i] != ']' {
			var dup string
			if i, dup = dupScan(v, i); dup != "" {
				return i, dup
			}
			i = skipSpace(v, i)
			if i < len(v) && v[i] == ',' {
				i = skipSpace(v, i+1)
			}
		}
		return i + 1, ""
	}
	return skipValue(v, i), ""
}

// MemberSpans returns the spans (relative to obj) of the values of every
// member called name of the JSON object obj, in order, escaped names
// included: with duplicates, peers disagree on which one counts, so an edit
// must change them all. It returns nil when obj is not an object or has no
// such member.
func MemberSpans(obj []byte, name string) []Span {
	var out []Span
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kEnd := skipString(obj, i)
		match := memberName(obj[i:kEnd]) == name
		i = skipSpace(obj, kEnd)
		i = skipSpace(obj, i+1)
		vEnd := skipValue(obj, i)
		if match {
			out = append(out, Span{i, vEnd})
		}
		i = skipSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return out
}
