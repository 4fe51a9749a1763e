package acp

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
)

// Kind is the kind of a JSON-RPC 2.0 message (JSON-RPC 2.0 §4, §5).
type Kind uint8

const (
	// KindRequest has a method and an id and wants a response.
	KindRequest Kind = iota + 1
	// KindNotification has a method and no id; it never gets a response.
	KindNotification
	// KindResponse has an id and exactly one of result or error.
	KindResponse
)

// String returns "request", "notification", "response" or "invalid".
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Span is a byte range [Start, End) of a line. The zero Span is absent.
type Span struct{ Start, End int }

// Present reports whether the member was in the message.
func (s Span) Present() bool { return s.End > s.Start }

// Envelope is the parsed JSON-RPC 2.0 envelope of one message. Spans point
// into the line it was parsed from, which must not change while they are used.
// The payload (params, result, error) is located, never decoded.
type Envelope struct {
	Kind   Kind
	Method string // requests and notifications
	ID     Span   // raw id value: a JSON string, number or null
	Params Span
	Result Span
	Error  Span
	// JSONRPC is the raw value of the jsonrpc member (see CheckVersion).
	JSONRPC Span
	// Update locates params' session/update parts (see UpdateSpans).
	Update UpdateSpans
	// MetaNames reports that some member of some object in the line is
	// named "_meta" or has an escape in its name. When it is false,
	// DeleteMetaMembers finds nothing to remove anywhere in the line, so a
	// relay need not look (Parse found out in its one pass).
	MetaNames bool
}

// ErrNotJSON reports a line that is not one valid JSON value. The bridge
// logs such agent output and never forwards it (ACP transports: the agent
// MUST NOT write anything but ACP messages to stdout).
var ErrNotJSON = errors.New("not a JSON value")

// Parse locates the envelope members of one NDJSON line (without its
// newline). It returns ErrNotJSON when line is not valid JSON, and an error
// wrapping ErrInvalidRequest when it is JSON but not a JSON-RPC 2.0 message:
// not an object, a duplicate envelope member, a method that is not a
// string, an id that is not a string, number or null, both method and
// result/error, or a response with both or neither of result and error;
// and an error wrapping ErrInvalidParams when a member of params it locates
// (sessionId, update, and update's sessionUpdate, content, messageId and
// content's type and text: [UpdateSpans]) comes twice in its object, also
// under an escaped spelling (a JSON decoder reads the last, the spans
// would hold the first).
// Safe for concurrent use; allocates only for escaped member names.
func Parse(line []byte) (Envelope, error) {
	var env Envelope
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		if !valid(line) {
			return env, ErrNotJSON
		}
		return env, fmt.Errorf("%w: message is not an object", ErrInvalidRequest)
	}
	// One pass validates the line and locates the envelope members.
	var method, jsonrpc Span
	var dup []byte
	var spans [7]Span
	var others [3]bool
	var meta bool
	var dupShaped string // a member of paramsShape that came twice
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return env, ErrNotJSON
			}
			kEnd := scanString(line, i)
			if kEnd < 0 {
				return env, ErrNotJSON
			}
			key := line[i+1 : kEnd-1]
			if metaKey(key) {
				meta = true
			}
			if bytes.IndexByte(key, '\\') >= 0 {
				var s string
				_ = json.Unmarshal(line[i:kEnd], &s) // valid: scanned
				key = []byte(s)
			}
			i = skipSpace(line, kEnd)
			if i >= len(line) || line[i] != ':' {
				return env, ErrNotJSON
			}
			i = skipSpace(line, i+1)
			var vEnd int
			if string(key) == "params" && !env.Params.Present() {
				vEnd = scanShaped(line, i, 1, paramsShape, &spans, &others, &meta, &dupShaped)
			} else {
				vEnd = scanValue(line, i, 1, &meta)
			}
			if vEnd < 0 {
				return env, ErrNotJSON
			}
			var dst *Span
			switch string(key) {
			case "id":
				dst = &env.ID
			case "method":
				dst = &method
			case "params":
				dst = &env.Params
			case "result":
				dst = &env.Result
			case "error":
				dst = &env.Error
			case "jsonrpc":
				dst = &jsonrpc
			}
			if dst != nil {
				if dst.Present() && dup == nil {
					dup = key
				}
				*dst = Span{i, vEnd}
			}
			i = skipSpace(line, vEnd)
			if i >= len(line) {
				return env, ErrNotJSON
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return env, ErrNotJSON
			}
			i = skipSpace(line, i+1)
		}
	}
	if skipSpace(line, i) != len(line) {
		return env, ErrNotJSON
	}
	if dup != nil {
		return Envelope{}, fmt.Errorf("%w: duplicate member %q", ErrInvalidRequest, dup)
	}
	if dupShaped != "" {
		return Envelope{}, fmt.Errorf("%w: duplicate member %q in params", ErrInvalidParams, dupShaped)
	}
	if env.Params.Present() && line[env.Params.Start] == '{' {
		env.Update = UpdateSpans{
			SessionID: spans[0], Update: spans[1], ParamsOther: others[0],
			Kind: spans[2], Content: spans[3], MessageID: spans[4], UpdateOther: others[1],
			ContentType: spans[5], Text: spans[6], ContentOther: others[2],
		}
	}
	env.JSONRPC = jsonrpc
	env.MetaNames = meta
	return env, env.classify(line, method)
}

func (env *Envelope) classify(line []byte, method Span) error {
	if env.ID.Present() {
		switch line[env.ID.Start] {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return fmt.Errorf("%w: id must be a string, number or null", ErrInvalidRequest)
		}
	}
	hasResult, hasError := env.Result.Present(), env.Error.Present()
	if method.Present() {
		if line[method.Start] != '"' {
			return fmt.Errorf("%w: method must be a string", ErrInvalidRequest)
		}
		if hasResult || hasError {
			return fmt.Errorf("%w: message has both method and result or error", ErrInvalidRequest)
		}
		m := line[method.Start+1 : method.End-1]
		if bytes.IndexByte(m, '\\') >= 0 {
			var m string // a local: a pointer into env would move env to the heap
			_ = json.Unmarshal(line[method.Start:method.End], &m)
			env.Method = m
		} else {
			env.Method = methodName(m)
		}
		env.Kind = KindNotification
		if env.ID.Present() {
			env.Kind = KindRequest
		}
		return nil
	}
	if !env.ID.Present() {
		return fmt.Errorf("%w: message has neither method nor id", ErrInvalidRequest)
	}
	if hasResult == hasError {
		return fmt.Errorf("%w: response must have exactly one of result and error", ErrInvalidRequest)
	}
	env.Kind = KindResponse
	return nil
}

// CheckVersion returns nil when the jsonrpc member of the message line
// (the one env was parsed from) is the JSON string "2.0", and an error
// wrapping ErrInvalidRequest when it is missing or anything else
// (JSON-RPC 2.0 §4: "MUST be exactly \"2.0\""). Parse does not check it, so
// that the bridge can be strict with hosts and lenient with agents.
func (env Envelope) CheckVersion(line []byte) error {
	if !env.JSONRPC.Present() {
		return fmt.Errorf("%w: jsonrpc member missing", ErrInvalidRequest)
	}
	if v, ok := StringValue(env.JSONRPC.Bytes(line)); !ok || v != "2.0" {
		return fmt.Errorf("%w: jsonrpc must be the string \"2.0\"", ErrInvalidRequest)
	}
	return nil
}

// methodName returns m as a string, without allocating for the methods
// that stream (a constant is returned for them).
func methodName(m []byte) string {
	switch string(m) {
	case MethodSessionUpdate:
		return MethodSessionUpdate
	case MethodRequestPermission:
		return MethodRequestPermission
	case MethodCancelRequest:
		return MethodCancelRequest
	case MethodSessionPrompt:
		return MethodSessionPrompt
	case MethodSessionCancel:
		return MethodSessionCancel
	}
	return string(m)
}

// Bytes returns the bytes of s in line, or nil when s is absent.
func (s Span) Bytes(line []byte) []byte {
	if !s.Present() {
		return nil
	}
	return line[s.Start:s.End]
}

// WithID returns a new line equal to line except that the id value at span
// is replaced by id (raw JSON). Every other byte is kept as it was.
func WithID(line []byte, span Span, id []byte) []byte {
	out := make([]byte, 0, len(line)-(span.End-span.Start)+len(id)+1)
	out = append(out, line[:span.Start]...)
	out = append(out, id...)
	return append(out, line[span.End:]...)
}

// IDKey returns a map key for a raw id that is equal for ids that JSON-RPC
// peers treat as equal: numbers are compared by value when they are
// integers (so 7, 7.0 and 7e0 match), strings by their decoded text.
func IDKey(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		if bytes.IndexByte(raw, '\\') < 0 {
			return "s" + string(raw[1:len(raw)-1])
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "s" + s
		}
		return "r" + string(raw)
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return "n" + strconv.FormatInt(n, 10)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == float64(int64(f)) {
		return "n" + strconv.FormatInt(int64(f), 10)
	}
	return "r" + string(raw)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'
// in valid JSON, scanning 8 bytes at a time for a quote or a backslash.
func skipString(b []byte, i int) int {
	i++
	for {
		for i+8 <= len(b) {
			if x := quoteBytes(binary.LittleEndian.Uint64(b[i:])); x != 0 {
				i += bits.TrailingZeros64(x) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			return len(b)
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
}

// skipValue returns the index after the JSON value starting at b[i]. b must
// be valid JSON (checked by valid first).
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
