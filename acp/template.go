package acp

import "unicode/utf8"

// Parser parses the messages of one stream (one agent's stdout, say) as
// Parse does, with the same result for every line, and faster for a line
// shaped like one it parsed before. An agent streaming a prompt turn
// writes thousands of session/update notifications that differ only in
// their string values (sessionId, text, ...); for those, Parser compares
// the bytes between the strings with a remembered line and validates only
// the strings, instead of scanning the whole structure again.
//
// The shortcut is exact: a line is taken by a template only when it is
// the template's line with some strings below the top level replaced by
// other valid JSON strings, and such a line is valid JSON with the same
// members, nesting and top-level values (so the same Kind, Method,
// MetaNames and Update flags), its spans moved by the lengths of the
// strings. Any other line goes through Parse, which gives the verdict.
// FuzzParserAgreesWithParse checks that both always agree.
//
// A Parser is not safe for concurrent use; the zero value is ready.
type Parser struct {
	tmpls [parserTemplates]*template
	last  int  // the template that matched last, tried first
	next  int  // the slot the next learned template goes to
	hits  int  // lines a template took (for tests)
	utf8  bool // the line parsed last is valid UTF-8
}

// parserTemplates is how many line shapes a Parser remembers: a prompt
// turn interleaves text chunks with tool call updates of a few shapes.
const parserTemplates = 4

// Template limits: longer lines, more strings or deeper nesting are not
// remembered (Parse alone handles them).
const (
	maxTemplateLine  = 16 << 10
	maxTemplateHoles = 32
	maxTemplateDepth = 32
)

// template is a notification line Parse accepted, cut at its string
// values below the top level (the holes): lits[k] is the text before hole
// k and lits[n] the text after the last.
type template struct {
	lits []string
	ends []int // ends[k]: where the text before lits[k] ends in the line (0, then each hole's end)
	// same[k] is lits[k] followed by hole k's string as the template's
	// line has it: a line with that same string there is compared in one
	// piece, its string not scanned again (a valid string ends at its
	// first unescaped quote, so it is that string). vary[k]: hole k was
	// last seen with another string, and same[k] is not tried.
	same []string
	vary []bool
	utf8 bool // the template's line is valid UTF-8
	env  Envelope
	// moved is match's scratch space, one entry per hole and one more
	// (a Parser is used by one goroutine at a time).
	moved []int
	// fix lists the spans of env that move when the holes before them
	// change length: the present ones with an endpoint after the first
	// hole.
	fix []spanFix
}

// spanFix is a span of a template's envelope (its index in spanPtrs
// order) and, for its start and end, the index in ends of the text the
// endpoint lies in.
type spanFix struct{ span, r0, r1 uint8 }

// envSpans is the number of spans in an Envelope.
const envSpans = 12

// spanPtrs returns every span of e.
func spanPtrs(e *Envelope) [envSpans]*Span {
	u := &e.Update
	return [envSpans]*Span{&e.ID, &e.Params, &e.Result, &e.Error, &e.JSONRPC,
		&u.SessionID, &u.Update, &u.Kind, &u.Content, &u.MessageID, &u.ContentType, &u.Text}
}

// Parse returns what the package's Parse returns for line.
func (p *Parser) Parse(line []byte) (env Envelope, err error) {
	err = p.ParseInto(line, &env)
	return env, err
}

// ParseInto is Parse that sets *env to the Envelope Parse returns
// instead of returning it: a caller parsing every line of a stream keeps
// one Envelope and does not copy it for each.
func (p *Parser) ParseInto(line []byte, env *Envelope) (err error) {
	for k := range parserTemplates {
		j := (p.last + k) % parserTemplates
		if t := p.tmpls[j]; t != nil {
			if ok, valid := t.match(line, env); ok { // env is set only on a match
				p.last = j
				p.hits++
				p.utf8 = valid || utf8.Valid(line)
				return nil
			}
		}
	}
	*env, err = Parse(line)
	p.utf8 = err == nil && utf8.Valid(line)
	if err == nil && env.Kind == KindNotification && len(line) <= maxTemplateLine {
		if t := learn(line, *env); t != nil {
			p.tmpls[p.next] = t
			p.last = p.next
			p.next = (p.next + 1) % parserTemplates
		}
	}
	return err
}

// ValidUTF8 reports whether the line Parse accepted last is valid UTF-8
// (RFC 3629), as utf8.Valid would: JSON text exchanged between systems is
// UTF-8 (RFC 8259 section 8.1). For a line a template took, only the
// strings that may hold a byte >= 0x80 are checked, in the pass that
// validates them. False after a line Parse refused.
func (p *Parser) ValidUTF8() bool { return p.utf8 }

// match reports whether line is t's line with other strings in its holes,
// and sets *env to its envelope; valid reports that the line is known to
// be valid UTF-8 (false: not known).
func (t *template) match(line []byte, env *Envelope) (ok, valid bool) {
	// moved[k]: how far the text after hole k lies from where it lies in
	// t's line (moved[0], before the first hole, is 0). Every entry is
	// set below before it is read.
	moved := t.moved
	pos := 0
	n := len(t.lits) - 1
	valid = t.utf8
	for k := range n {
		if !t.vary[k] {
			if same := t.same[k]; len(line)-pos >= len(same) && string(line[pos:pos+len(same)]) == same {
				pos += len(same)
				moved[k+1] = pos - t.ends[k+1]
				continue
			}
		}
		lit := t.lits[k]
		q := pos + len(lit)
		if q >= len(line) || line[q] != '"' || string(line[pos:q]) != lit {
			return false, false
		}
		var hi uint64
		if pos, hi = scanStringHi(line, q); pos < 0 {
			return false, false
		}
		t.vary[k] = true // the same text with another string here
		if hi != 0 && !utf8.Valid(line[q:pos]) {
			valid = false // Parse does not refuse it; the caller checks
		}
		moved[k+1] = pos - t.ends[k+1]
	}
	if string(line[pos:]) != t.lits[n] {
		return false, false
	}
	*env = t.env
	for _, f := range t.fix {
		s := env.span(f.span)
		s.Start += moved[f.r0]
		s.End += moved[f.r1]
	}
	return true, valid
}

// span returns the span of e at index i in spanPtrs order.
func (e *Envelope) span(i uint8) *Span {
	u := &e.Update
	switch i {
	case 0:
		return &e.ID
	case 1:
		return &e.Params
	case 2:
		return &e.Result
	case 3:
		return &e.Error
	case 4:
		return &e.JSONRPC
	case 5:
		return &u.SessionID
	case 6:
		return &u.Update
	case 7:
		return &u.Kind
	case 8:
		return &u.Content
	case 9:
		return &u.MessageID
	case 10:
		return &u.ContentType
	}
	return &u.Text
}

// learn makes a template of line, which Parse accepted with env, or
// returns nil when line is over the template limits.
func learn(line []byte, env Envelope) *template {
	var holes []Span
	i := skipSpace(line, 0)
	if collectHoles(line, i, 0, &holes) < 0 {
		return nil
	}
	t := &template{env: env, ends: make([]int, len(holes)+1), lits: make([]string, len(holes)+1),
		same: make([]string, len(holes)), vary: make([]bool, len(holes)), utf8: utf8.Valid(line),
		moved: make([]int, len(holes)+1)}
	at := 0
	for k, h := range holes {
		t.lits[k] = string(line[at:h.Start])
		t.same[k] = string(line[at:h.End])
		at = h.End
		t.ends[k+1] = h.End
	}
	t.lits[len(holes)] = string(line[at:])
	region := func(p int) uint8 {
		r := 0
		for r < len(holes) && holes[r].End <= p {
			r++
		}
		return uint8(r)
	}
	for i, s := range spanPtrs(&env) {
		if r0, r1 := region(s.Start), region(s.End); s.Present() && r1 > 0 {
			t.fix = append(t.fix, spanFix{uint8(i), r0, r1})
		}
	}
	return t
}

// collectHoles walks the valid JSON value at b[i], at nesting depth depth
// (0 for the line itself), appends the span of every string value below
// the top-level members to holes and returns where the value ends, or -1
// when the value is over the template limits.
func collectHoles(b []byte, i, depth int, holes *[]Span) int {
	switch b[i] {
	case '"':
		end := skipString(b, i)
		if depth >= 2 {
			if len(*holes) == maxTemplateHoles {
				return -1
			}
			*holes = append(*holes, Span{i, end})
		}
		return end
	case '{', '[':
		if depth >= maxTemplateDepth {
			return -1
		}
		obj := b[i] == '{'
		i = skipSpace(b, i+1)
		for i < len(b) && b[i] != '}' && b[i] != ']' {
			if obj {
				i = skipSpace(b, skipString(b, i)) + 1 // the name and its ':'
				i = skipSpace(b, i)
			}
			if i = collectHoles(b, i, depth+1, holes); i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return i + 1
	}
	return skipValue(b, i)
}
