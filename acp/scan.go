package acp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
)

// The validating scanner behind Parse and valid: one pass over a line
// that checks it is JSON (RFC 8259, with encoding/json's limits) and
// returns where each value ends. Strings are scanned 8 bytes at a time.

// MaxDepth is the deepest nesting of arrays and objects a message may
// have: encoding/json's limit. A deeper value is not JSON to the bridge,
// so a line of a few megabytes of '[' is refused instead of exhausting
// the stack.
const MaxDepth = 10000

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialBytes returns a word whose lowest set bit is the high bit of the
// first byte of w (little endian) that is '"', '\\' or below 0x20; zero
// when there is none. Bytes >= 0x80 never match.
func specialBytes(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (w - lsb*0x20)) &^ w & msb
}

// quoteBytes is specialBytes for '"' and '\\' only (input known valid).
func quoteBytes(w uint64) uint64 {
	q := w ^ (lsb * '"')
	s := w ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s) & msb
}

// scanString validates the string starting at b[i] == '"' and returns the
// index after its closing quote, or -1.
func scanString(b []byte, i int) int {
	end, _ := scanStringHi(b, i)
	return end
}

// scanStringHi is scanString that also returns a word with the high bit
// of some byte set when the string may hold a byte >= 0x80 (zero: it is
// ASCII). The words it reads whole are counted, so bytes just after the
// string can make it report a string that is ASCII as one that may not be.
func scanStringHi(b []byte, i int) (int, uint64) {
	i++
	var hi uint64
	for {
		// 16 bytes a round while they last, then 8: the text of a chunk
		// is mostly plain bytes.
		for i+16 <= len(b) {
			w := b[i : i+16]
			w0, w1 := binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
			hi |= w0 | w1
			x0, x1 := specialBytes(w0), specialBytes(w1)
			if x0|x1 != 0 {
				if x0 != 0 {
					i += bits.TrailingZeros64(x0) / 8
				} else {
					i += 8 + bits.TrailingZeros64(x1)/8
				}
				goto special
			}
			i += 16
		}
		for i+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[i:])
			hi |= w
			if x := specialBytes(w); x != 0 {
				i += bits.TrailingZeros64(x) / 8
				break
			}
			i += 8
		}
	special:
		if i >= len(b) {
			return -1, hi
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, hi & msb
		case c < 0x20:
			return -1, hi
		case c == '\\':
			if i+1 >= len(b) {
				return -1, hi
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1, hi
				}
				i += 6
			default:
				return -1, hi
			}
		default:
			hi |= uint64(c)
			i++
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scanNumber validates the number starting at b[i] and returns the index
// after it, or -1.
func scanNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i
}

// scanLiteral checks that b[i:] starts with lit.
func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanValue validates the value starting at b[i] (no leading space) at
// nesting depth depth and returns the index after it, or -1. It sets *meta
// when an object in the value has a member that DeleteMetaMembers could
// act on (see metaKey).
func scanValue(b []byte, i, depth int, meta *bool) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; c {
	case '"':
		return scanString(b, i)
	case '{':
		if depth >= MaxDepth {
			return -1
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return -1
			}
			kStart := i
			if i = scanString(b, i); i < 0 {
				return -1
			}
			if metaKey(b[kStart+1 : i-1]) {
				*meta = true
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return -1
			}
			if i = scanValue(b, skipSpace(b, i+1), depth+1, meta); i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == '}' {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
	case '[':
		if depth >= MaxDepth {
			return -1
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1
		}
		for {
			if i = scanValue(b, i, depth+1, meta); i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == ']' {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
	case 't':
		return scanLiteral(b, i, "true")
	case 'f':
		return scanLiteral(b, i, "false")
	case 'n':
		return scanLiteral(b, i, "null")
	}
	return scanNumber(b, i)
}

// valid reports whether line is exactly one valid JSON value (RFC 8259),
// as encoding/json.Valid does, several times faster: it runs on every
// message the bridge relays. FuzzValid checks that both always agree.
func valid(line []byte) bool {
	var meta bool
	i := scanValue(line, skipSpace(line, 0), 0, &meta)
	return i >= 0 && skipSpace(line, i) == len(line)
}

// UpdateSpans locates, in one line, the parts of a session/update
// notification's params (ACP "session/update",
// https://agentclientprotocol.com/protocol/prompt-turn) that a relay
// routes and coalesces by, found by Parse in its one pass whatever the
// method. Spans are relative to the line and zero when absent (or when the
// enclosing value is not an object). Member names are compared as written
// (an escaped name never matches) and the first of duplicates wins, as in
// Members. The Other flags report members besides the named ones.
type UpdateSpans struct {
	SessionID, Update Span // params.sessionId, params.update
	ParamsOther       bool
	// Kind, Content, MessageID: update.sessionUpdate, content, messageId.
	Kind, Content, MessageID Span
	UpdateOther              bool
	// ContentType, Text: update.content.type and text.
	ContentType, Text Span
	ContentOther      bool
}

// shape names the members scanShaped records in an object: the span of
// names[k]'s value goes to spans[base+k]; sub[k], when not nil, is the
// shape of that value. other is the flag index for unnamed members.
type shape struct {
	names []string
	base  int
	sub   []*shape
	other int
}

var (
	contentShape = &shape{names: []string{"type", "text"}, base: 5, other: 2}
	updateShape  = &shape{names: []string{"sessionUpdate", "content", "messageId"}, base: 2, sub: []*shape{nil, contentShape, nil}, other: 1}
	paramsShape  = &shape{names: []string{"sessionId", "update"}, base: 0, sub: []*shape{nil, updateShape}, other: 0}
)

// scanShaped is scanValue that, for an object, also records the spans and
// flags of sh (spans and others are UpdateSpans' in order). A member of sh
// that comes twice in one object (also spelled with escapes, as a JSON
// decoder reads it) sets *dup to its name: the spans keep the first, a
// decoder reads the last, so the caller refuses the message.
func scanShaped(b []byte, i, depth int, sh *shape, spans *[7]Span, others *[3]bool, meta *bool, dup *string) int {
	if i >= len(b) || b[i] != '{' || depth >= MaxDepth {
		return scanValue(b, i, depth, meta)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return -1
		}
		kStart := i
		if i = scanString(b, i); i < 0 {
			return -1
		}
		key := b[kStart+1 : i-1]
		if metaKey(key) {
			*meta = true
		}
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			_ = json.Unmarshal(b[kStart:i], &s) // valid: scanned
			key = []byte(s)
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		i = skipSpace(b, i+1)
		k := -1
		for n, name := range sh.names {
			if string(key) == name {
				k = n
				break
			}
		}
		vStart := i
		switch {
		case k < 0:
			others[sh.other] = true
			i = scanValue(b, i, depth+1, meta)
		case sh.sub != nil && sh.sub[k] != nil && !spans[sh.base+k].Present():
			i = scanShaped(b, i, depth+1, sh.sub[k], spans, others, meta, dup)
		default:
			i = scanValue(b, i, depth+1, meta)
		}
		if i < 0 {
			return -1
		}
		if k >= 0 {
			if !spans[sh.base+k].Present() {
				spans[sh.base+k] = Span{vStart, i}
			} else if *dup == "" {
				*dup = sh.names[k]
			}
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return -1
		}
		if b[i] == '}' {
			return i + 1
		}
		if b[i] != ',' {
			return -1
		}
		i = skipSpace(b, i+1)
	}
}

// metaKey reports whether a member name, as written between its quotes,
// is "_meta" or has an escape (which may spell "_meta" or any other
// name): the only members DeleteMetaMembers looks into.
func metaKey(key []byte) bool {
	return len(key) == 5 && string(key) == "_meta" || bytes.IndexByte(key, '\\') >= 0
}
