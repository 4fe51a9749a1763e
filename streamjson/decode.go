package streamjson

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
)

// DefaultMaxLineBytes is the default cap on one stream-json line: 64 MiB,
// as for ACP messages.
const DefaultMaxLineBytes = 64 << 20

// ErrLineTooLong reports a line longer than the decoder's MaxLineBytes. The
// line is discarded up to its newline and decoding goes on after it.
var ErrLineTooLong = errors.New("line too long")

// ErrMalformed reports a line that is not a JSON object with a string
// "type" member, or whose known type has members of the wrong JSON type.
var ErrMalformed = errors.New("malformed stream-json line")

// LineError is a line that could not be decoded: Line is its 1-based
// number in the input, Err wraps ErrMalformed or ErrLineTooLong. The
// decoder goes on with the next line.
type LineError struct {
	Line int
	Err  error
}

// Error implements error.
func (e *LineError) Error() string { return fmt.Sprintf("stream-json line %d: %v", e.Line, e.Err) }

// Unwrap returns Err.
func (e *LineError) Unwrap() error { return e.Err }

// DecoderOptions configure a [Decoder].
type DecoderOptions struct {
	// MaxLineBytes caps one line, newline excluded (DefaultMaxLineBytes
	// when 0 or negative).
	MaxLineBytes int
	// Logger receives, at debug level, unknown message types, control
	// request subtypes and members that the decoder ignores (nil: none).
	Logger *slog.Logger
}

// Decoder reads stream-json messages, one per line, from a reader. Empty
// lines are skipped; a final line without newline is decoded. It is not
// safe for concurrent use.
type Decoder struct {
	r    *bufio.Reader
	max  int
	log  *slog.Logger
	line int
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader, opts DecoderOptions) *Decoder {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &Decoder{r: bufio.NewReaderSize(r, min(max+1, 64<<10)), max: max, log: opts.Logger}
}

// Decode returns the next message. A malformed or over-long line returns a
// *[LineError] and the next call reads the line after it; io.EOF ends the
// input; other read errors are returned as they came. Unknown types and
// control request subtypes return [*Unknown] and [*UnknownRequest] values,
// never errors.
func (d *Decoder) Decode() (Message, error) {
	for {
		line, err := d.next()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			continue
		}
		m, err := Parse(line)
		if err != nil {
			return nil, &LineError{Line: d.line, Err: err}
		}
		d.debug(m, line)
		return m, nil
	}
}

// Line returns the number of the line last read (1-based; 0 before any).
func (d *Decoder) Line() int { return d.line }

// next returns the next line without "\n" or "\r\n"; the slice is valid
// until the next call.
func (d *Decoder) next() ([]byte, error) {
	var buf []byte
	over := false
	for {
		frag, err := d.r.ReadSlice('\n')
		if len(frag) > 0 && !over {
			if len(buf)+len(frag) > d.max+2 {
				over, buf = true, nil
			} else {
				buf = append(buf, frag...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (!errors.Is(err, io.EOF) || (len(buf) == 0 && !over)):
			return nil, err
		}
		d.line++
		if over || len(trimEOL(buf)) > d.max {
			return nil, &LineError{Line: d.line, Err: fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, d.max)}
		}
		return trimEOL(buf), nil
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// debug logs what the decoder ignored in m.
func (d *Decoder) debug(m Message, line []byte) {
	if d.log == nil || !d.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	switch m := m.(type) {
	case *Unknown:
		d.log.Debug("stream-json: ignored unknown message", "line", d.line, "type", m.Type, "subtype", m.Subtype)
		return
	case *ControlRequest:
		if u, ok := m.Request.(*UnknownRequest); ok {
			d.log.Debug("stream-json: unknown control request subtype", "line", d.line, "subtype", u.Type)
			return
		}
	}
	if err := strictCheck(m, line); err != nil {
		d.log.Debug("stream-json: ignored members", "line", d.line, "type", m.MessageType(), "err", err)
	}
}

// strictCheck reports the top-level members of line (and of a control
// request's request object) that m's type does not have.
func strictCheck(m Message, line []byte) error {
	var extra []string
	var top map[string]json.RawMessage
	if json.Unmarshal(line, &top) != nil {
		return nil
	}
	known := knownKeys(m, "type", "subtype")
	if c, ok := m.(*ControlRequest); ok {
		if _, ok := c.Request.(*InitializeRequest); !ok {
			var req map[string]json.RawMessage
			if json.Unmarshal(top["request"], &req) == nil {
				extra = unknownKeys(req, knownKeys(c.Request, "subtype"), "request.")
			}
		}
	}
	extra = append(unknownKeys(top, known, ""), extra...)
	if len(extra) > 0 {
		return fmt.Errorf("unknown members %v", extra)
	}
	return nil
}

// knownKeys returns the JSON member names of the struct that v points to.
func knownKeys(v any, more ...string) map[string]bool {
	k := map[string]bool{}
	for _, s := range more {
		k[s] = true
	}
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return k
	}
	for f := range t.Elem().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		k[name] = true
	}
	return k
}

func unknownKeys(obj map[string]json.RawMessage, known map[string]bool, prefix string) []string {
	var out []string
	for key := range obj {
		if !known[key] {
			out = append(out, prefix+key)
		}
	}
	slices.Sort(out)
	return out
}
