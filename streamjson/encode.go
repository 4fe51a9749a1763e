package streamjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// Encoder writes stream-json messages, one JSON object per line.
// It is not safe for concurrent use; give each output one Encoder and one
// writer goroutine.
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an Encoder that writes to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes m as one line ending in "\n" with a single Write call.
// Fields of type json.RawMessage (a tool call's input, say) are written
// byte for byte as they were received; every other value is encoded as
// encoding/json would, without HTML escaping. An invalid json.RawMessage
// is an error and nothing is written.
func (e *Encoder) Encode(m Message) error {
	b, err := AppendMessage(e.buf[:0], m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	e.buf = b
	_, err = e.w.Write(b)
	return err
}

// AppendMessage appends the JSON encoding of m (without newline) to b, as
// [Encoder.Encode] writes it: {"type":…} first, then the subtype of fixed
// subtypes, then the fields in declaration order.
func AppendMessage(b []byte, m Message) ([]byte, error) {
	if m == nil {
		return b, fmt.Errorf("encode stream-json message: nil message")
	}
	switch m := m.(type) {
	case *Unknown:
		return appendRaw(b, m.Raw)
	case *StreamEvent:
		return appendStreamEvent(b, m)
	}
	b = append(b, `{"type":`...)
	b = appendString(b, m.MessageType())
	lead := false
	if s, ok := m.(fixedSubtype); ok {
		b = append(b, `,"subtype":`...)
		b = appendString(b, s.fixedSubtype())
	}
	b, err := appendFields(b, reflect.ValueOf(m).Elem(), &lead)
	if err != nil {
		return b, fmt.Errorf("encode stream-json %s: %w", m.MessageType(), err)
	}
	return append(b, '}'), nil
}

// Marshal returns the JSON encoding of v with the rules of [AppendMessage]:
// raw JSON fields verbatim, no HTML escaping. It is used for payloads such
// as a control response's response object.
func Marshal(v any) ([]byte, error) { return appendValue(nil, reflect.ValueOf(v)) }

// fixedSubtype is implemented by message types whose subtype is implied by
// the Go type (system/init, system/status).
type fixedSubtype interface{ fixedSubtype() string }

// appender is implemented by values with their own encoding.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

var (
	rawType      = reflect.TypeFor[json.RawMessage]()
	appenderType = reflect.TypeFor[appender]()
)

// appendFields appends the fields of struct v as ,"name":value pairs (no
// braces); first reports whether no pair was written yet.
func appendFields(b []byte, v reflect.Value, first *bool) ([]byte, error) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := v.Field(i)
		if strings.Contains(opts, "omitempty") && isEmpty(fv) {
			continue
		}
		if !*first {
			b = append(b, ',')
		}
		*first = false
		b = appendString(b, name)
		b = append(b, ':')
		var err error
		if b, err = appendValue(b, fv); err != nil {
			return b, fmt.Errorf("%s: %w", name, err)
		}
	}
	return b, nil
}

// appendValue appends the JSON encoding of v.
func appendValue(b []byte, v reflect.Value) ([]byte, error) {
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	if v.Type() == rawType {
		if v.Len() == 0 {
			return append(b, "null"...), nil
		}
		return appendRaw(b, v.Bytes())
	}
	if v.Type().Implements(appenderType) && !(v.Kind() == reflect.Pointer && v.IsNil()) {
		return v.Interface().(appender).appendJSON(b)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		if p, ok := v.Interface().(RequestPayload); ok && v.Kind() == reflect.Interface {
			return appendPayload(b, p)
		}
		return appendValue(b, v.Elem())
	case reflect.Struct:
		b = append(b, '{')
		first := true
		b, err := appendFields(b, v, &first)
		return append(b, '}'), err
	case reflect.Slice:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		fallthrough
	case reflect.Array:
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, v.Index(i)); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case reflect.Map:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		if v.Type().Key().Kind() != reflect.String {
			return b, fmt.Errorf("map key type %s", v.Type().Key())
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k.String())
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, v.MapIndex(k)); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	return appendPlain(b, v.Interface())
}

// appendPlain encodes a scalar with encoding/json, without HTML escaping.
func appendPlain(b []byte, x any) ([]byte, error) {
	var w bytes.Buffer
	enc := json.NewEncoder(&w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(w.Bytes(), []byte("\n"))...), nil
}

// appendString appends s as a JSON string, without HTML escaping.
func appendString(b []byte, s string) []byte {
	simple := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			simple = false
			break
		}
	}
	if simple {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	b, _ = appendPlain(b, s)
	return b
}

// appendRaw appends raw JSON verbatim after checking that it is one value
// that cannot break the line framing.
func appendRaw(b []byte, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return b, fmt.Errorf("invalid raw JSON value")
	}
	if bytes.ContainsAny(raw, "\r\n") {
		// Whitespace between tokens only (strings cannot hold raw
		// newlines in valid JSON): drop it to keep one message a line.
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return b, err
		}
		raw = c.Bytes()
	}
	return append(b, raw...), nil
}

// isEmpty reports whether v is empty for omitempty, as encoding/json does.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// reflectOf is reflect.ValueOf.
func reflectOf(v any) reflect.Value { return reflect.ValueOf(v) }

// appendStreamEvent is AppendMessage for the most frequent message (one
// per chunk with --include-partial-messages), without reflection; an event
// the Mapper built is not validated again.
func appendStreamEvent(b []byte, e *StreamEvent) ([]byte, error) {
	b = append(b, `{"type":"stream_event"`...)
	if e.UUID != "" {
		b = append(b, `,"uuid":`...)
		b = appendString(b, e.UUID)
	}
	b = append(b, `,"session_id":`...)
	b = appendString(b, e.SessionID)
	b = append(b, `,"parent_tool_use_id":`...)
	if e.ParentToolUseID == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, *e.ParentToolUseID)
	}
	b = append(b, `,"event":`...)
	switch {
	case len(e.Event) == 0:
		b = append(b, "null"...)
	case e.built:
		b = append(b, e.Event...)
	default:
		var err error
		if b, err = appendRaw(b, e.Event); err != nil {
			return b, fmt.Errorf("encode stream-json stream_event: event: %w", err)
		}
	}
	return append(b, '}'), nil
}
