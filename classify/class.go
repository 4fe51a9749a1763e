package classify

import "fmt"

// Class is the verdict on a shell command: Unknown, ReadOnly or Write.
//
// The zero value is Unknown, so a Verdict that was never filled in is
// never mistaken for ReadOnly. Classes combine with Max: Write beats
// Unknown, and Unknown beats ReadOnly.
type Class uint8

const (
	// Unknown means the text proves neither read-only nor write: a parse
	// failure, a runtime-determined program or flag, an interpreter, a
	// network client or a program the tables do not know.
	Unknown Class = iota
	// ReadOnly means the text alone proves the command has no effect
	// beyond printing (redirections only to /dev/null or to an fd).
	ReadOnly
	// Write means a known program, flag or redirection changes files,
	// processes, repository state or network-visible state.
	Write
)

// rank orders classes for Max: read-only < unknown < write.
func (c Class) rank() int {
	switch c {
	case ReadOnly:
		return 0
	case Write:
		return 2
	}
	return 1
}

// Max returns the stronger of c and d: Write beats Unknown, and Unknown
// beats ReadOnly.
func (c Class) Max(d Class) Class {
	if d.rank() > c.rank() {
		return d
	}
	return c
}

// String returns "read-only", "write" or "unknown".
func (c Class) String() string {
	switch c {
	case ReadOnly:
		return "read-only"
	case Write:
		return "write"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// MarshalText encodes c as "read-only", "write" or "unknown", so Class is
// a JSON string. It fails only for a value outside the three constants.
func (c Class) MarshalText() ([]byte, error) {
	if c > Write {
		return nil, fmt.Errorf("marshal class: invalid value %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText decodes "read-only", "write" or "unknown". Any other text
// is an error and leaves c unchanged.
func (c *Class) UnmarshalText(b []byte) error {
	switch string(b) {
	case "read-only":
		*c = ReadOnly
	case "write":
		*c = Write
	case "unknown":
		*c = Unknown
	default:
		return fmt.Errorf("unmarshal class: %q is not read-only, write or unknown", b)
	}
	return nil
}

// Verdict is the result of Command: the class, the words and operators
// that decided it, and the programs that would run. In JSON it is
// {"class": "write", "reasons": [...], "programs": [...]}; Err is left out.
type Verdict struct {
	// Class is the combined class of every command, redirection and
	// expansion in the input.
	Class Class `json:"class"`
	// Reasons are the words and operators that decided Class, in the
	// order the walk met them (source order, except that a command's own
	// reason follows those of the commands it wraps). Every reason has the
	// same class as the verdict; a read-only verdict lists at least one
	// reason per command. There is always at least one reason.
	Reasons []Reason `json:"reasons"`
	// Programs are the static program names that would run, in source
	// order, including those behind wrappers (sudo, xargs, sh -c, find
	// -exec). Names hidden by expansions are not listed.
	Programs []string `json:"programs,omitempty"`
	// Diverges reports that bash may read the input differently from
	// the parser the classifier walks: a comment, a here-document body
	// or a command may begin or end elsewhere under bash (see
	// docs/classify.md, "Where the parser and bash may disagree"), or
	// the input holds bytes they may read differently. Class is then not
	// ReadOnly, and the displayed text may not be the program bash runs:
	// plan mode refuses such a command instead of asking a human.
	Diverges bool `json:"diverges,omitempty"`
	// Err is the parse error, if the input did not parse: a
	// syntax.ParseError or syntax.LangError, whose Pos locates the
	// problem. Class is then Unknown.
	Err error `json:"-"`
}

// Reason names one word or operator of the input and what it decided.
type Reason struct {
	// Pos and End are byte offsets into the input: Text is src[Pos:End].
	// For a command nested in a quoted string (sh -c '...', eval, trap),
	// they point into that string when it is a plain single-quoted word,
	// and at the whole word otherwise.
	Pos int `json:"pos"`
	End int `json:"end"`
	// Class is what this word or operator alone implies.
	Class Class `json:"class"`
	// Text is the word or operator as written in the input.
	Text string `json:"text"`
	// Why explains the decision in a short phrase.
	Why string `json:"why"`
}

// String formats r as `"TEXT" (POS-END): WHY`.
func (r Reason) String() string {
	return fmt.Sprintf("%q (%d-%d): %s", r.Text, r.Pos, r.End, r.Why)
}
