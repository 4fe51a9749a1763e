package acp

import (
	"bytes"
	"encoding/json"
	"slices"
)

// DeleteMetaMembers returns v without every member called name of every
// object that is the value of a member called "_meta", at any depth of the
// JSON value v (ACP "Extensibility": _meta). Member names are compared
// after unescaping, so "\u0061cpmux" is "acpmux"; duplicates are all
// removed. Only the bytes of the removed members and one comma each are
// cut; every other byte is kept as it was. It also returns how many members
// it removed; when none, v itself comes back (no allocation). v must be
// valid JSON. Safe for concurrent use.
func DeleteMetaMembers(v []byte, name string) ([]byte, int) {
	// Any spelling of the key holds either the plain `"name"` or a \u escape.
	quoted := append(append(append(make([]byte, 0, 64), '"'), name...), '"') // on the stack
	if !bytes.Contains(v, quoted) && !bytes.Contains(v, []byte(`\u`)) {
		return v, 0
	}
	cuts := metaCuts(v, name)
	if len(cuts) == 0 {
		return v, 0
	}
	slices.SortFunc(cuts, func(a, b metaCut) int { return a.Start - b.Start })
	out := make([]byte, 0, len(v))
	at, n := 0, 0
	for _, c := range cuts {
		out = append(out, v[at:c.Start]...)
		at = c.End
		n += c.members
	}
	return append(out, v[at:]...), n
}

// metaCut is a byte range to remove and how many members it holds.
type metaCut struct {
	Span
	members int
}

// metaObject is one "_meta" object being scanned.
type metaObject struct {
	comma   int // index of the last ',' at this object's level, -1 before any
	members []metaMember
}

// metaMember is one member of a "_meta" object: where its key starts, the
// comma before it (-1 for the first), and for a removed one where its
// value ends.
type metaMember struct {
	comma, start, end int
	del               bool
}

// metaCuts scans v without recursion (the depth of v costs one byte of
// stack per level) and returns the ranges to cut.
func metaCuts(v []byte, name string) []metaCut {
	var (
		kinds     []byte // per open container: 'o' object, 'm' _meta object, 'a' array
		metas     []*metaObject
		cuts      []metaCut
		expectKey bool
	)
	for i := 0; i < len(v); {
		switch v[i] {
		case '{':
			kinds = append(kinds, 'o')
			expectKey = true
			i++
		case '[':
			kinds = append(kinds, 'a')
			expectKey = false
			i++
		case '}', ']':
			if k := len(kinds) - 1; k >= 0 {
				if kinds[k] == 'm' {
					cuts = append(cuts, metas[len(metas)-1].cuts()...)
					metas = metas[:len(metas)-1]
				}
				kinds = kinds[:k]
			}
			expectKey = false
			i++
		case ',':
			if k := len(kinds) - 1; k >= 0 && kinds[k] != 'a' {
				expectKey = true
				if kinds[k] == 'm' {
					metas[len(metas)-1].comma = i
				}
			}
			i++
		case '"':
			end := skipString(v, i)
			if !expectKey {
				i = end
				continue
			}
			expectKey = false
			key := memberName(v[i:end])
			j := skipSpace(v, skipSpace(v, end)+1) // the value
			if kinds[len(kinds)-1] == 'm' {
				m := metas[len(metas)-1]
				mem := metaMember{comma: m.comma, start: i}
				if key == name {
					mem.end, mem.del = skipValue(v, j), true
					m.members = append(m.members, mem)
					i = mem.end
					continue
				}
				m.members = append(m.members, mem)
			}
			if key == "_meta" && j < len(v) && v[j] == '{' {
				kinds = append(kinds, 'm')
				metas = append(metas, &metaObject{comma: -1})
				expectKey = true
				i = j + 1
				continue
			}
			i = j
		default:
			i++
		}
	}
	return cuts
}

// memberName decodes a member name (a whole JSON string, with its quotes,
// that valid accepted) as encoding/json does.
func memberName(raw []byte) string {
	if plainString(raw[1 : len(raw)-1]) { // strict.go
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// cuts returns the ranges that remove the object's deleted members and
// the commas between them and the members kept.
func (m *metaObject) cuts() []metaCut {
	last := -1 // the last member kept
	var del int
	for k, mem := range m.members {
		if mem.del {
			del++
		} else {
			last = k
		}
	}
	if del == 0 {
		return nil
	}
	n := len(m.members)
	if last < 0 {
		return []metaCut{{Span{m.members[0].start, m.members[n-1].end}, n}}
	}
	var out []metaCut
	for k := 0; k < last; k++ {
		if m.members[k].del {
			out = append(out, metaCut{Span{m.members[k].start, m.members[k+1].start}, 1})
		}
	}
	if last < n-1 {
		out = append(out, metaCut{Span{m.members[last+1].comma, m.members[n-1].end}, n - 1 - last})
	}
	return out
}
