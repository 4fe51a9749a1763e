package question

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/acpmux/acpmux/acp"
)

// ErrUnsupported reports a question acpmux cannot serve: a mode other than
// form and url, a URL that is not http or https, or a requested schema
// outside the subset [Compile] enforces. The broker answers such a question
// with action decline at once and journals the error's text.
var ErrUnsupported = errors.New("question not supported")

// Mode is how an elicitation asks (ACP schema CreateElicitationRequest,
// member mode).
type Mode string

// The elicitation modes of ACP v1.
const (
	// ModeForm asks for content described by a restricted JSON Schema.
	ModeForm Mode = "form"
	// ModeURL sends the user to a URL for an out-of-band interaction.
	ModeURL Mode = "url"
)

// Params are the params of elicitation/create (agent → client request;
// ACP schema CreateElicitationRequest). A question is scoped to a session
// (SessionID, optionally ToolCallID) or to a JSON-RPC request (RequestID,
// kept raw: a string, a number or null). Form mode carries RequestedSchema
// (kept raw, as the agent sent it); URL mode carries URL and ElicitationID.
// Meta is the request's _meta, kept raw and never interpreted.
// See https://agentclientprotocol.com/protocol/v1/elicitation
type Params struct {
	SessionID       acp.SessionID   `json:"sessionId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	RequestID       json.RawMessage `json:"requestId,omitempty"`
	Message         string          `json:"message"`
	Mode            Mode            `json:"mode"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// paramsMembers are the members of Params; others are ignored, as the
// SDK's schema strips them.
var paramsMembers = []string{"sessionId", "toolCallId", "requestId", "message", "mode",
	"requestedSchema", "url", "elicitationId", "_meta"}

// ParseParams decodes the params of elicitation/create. It refuses, with an
// error wrapping acp.ErrInvalidParams, params that are not one JSON object,
// a duplicate or case-variant member name, a member of the wrong JSON type,
// a missing message or mode, a question with neither sessionId nor
// requestId, form mode without a requestedSchema object, and URL mode
// without elicitationId or an absolute url. It does not look inside the
// schema; [New] does. Unknown members are ignored, and an optional member
// that is null counts as absent (ACP: "omitted and null are equivalent").
func ParseParams(data []byte) (Params, error) {
	m, err := acp.DecodeObject(data, paramsMembers, false)
	if err != nil {
		return Params{}, err
	}
	var p Params
	var mode string
	required := []struct {
		name string
		dst  *string
	}{{"message", &p.Message}, {"mode", &mode}}
	for _, s := range required {
		if *s.dst, err = acp.DecodeString(m[s.name], s.name); err != nil {
			return Params{}, err
		}
	}
	p.Mode = Mode(mode)
	optional := []struct {
		name string
		dst  *string
	}{{"sessionId", &p.SessionID}, {"toolCallId", &p.ToolCallID}, {"url", &p.URL}, {"elicitationId", &p.ElicitationID}}
	for _, s := range optional {
		if raw, ok := present(m, s.name); ok {
			if *s.dst, err = acp.DecodeString(raw, s.name); err != nil {
				return Params{}, err
			}
		}
	}
	p.RequestedSchema, _ = present(m, "requestedSchema")
	p.Meta, _ = present(m, "_meta")
	p.RequestID = m["requestId"] // null is a valid JSON-RPC id: kept
	return p, p.check(m)
}

// present returns the member name of m unless it is absent or null.
func present(m map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// check applies ParseParams' rules on the scope and the mode's members.
func (p Params) check(m map[string]json.RawMessage) error {
	if _, ok := present(m, "sessionId"); !ok && p.RequestID == nil {
		return fmt.Errorf("%w: sessionId or requestId is required", acp.ErrInvalidParams)
	}
	if r := p.RequestID; r != nil && r[0] != '"' && r[0] != 'n' && r[0] != '-' && (r[0] < '0' || r[0] > '9') {
		return fmt.Errorf("%w: requestId must be a string, a number or null", acp.ErrInvalidParams)
	}
	switch p.Mode {
	case ModeForm:
		if len(p.RequestedSchema) == 0 || p.RequestedSchema[0] != '{' {
			return fmt.Errorf("%w: requestedSchema must be an object in form mode", acp.ErrInvalidParams)
		}
	case ModeURL:
		if _, ok := present(m, "elicitationId"); !ok {
			return fmt.Errorf("%w: elicitationId is required in url mode", acp.ErrInvalidParams)
		}
		if u, err := url.Parse(p.URL); err != nil || !u.IsAbs() || u.Host == "" {
			return fmt.Errorf("%w: url must be an absolute URL in url mode", acp.ErrInvalidParams)
		}
	}
	return nil
}

// Question is one parsed elicitation/create: its params and, in form mode,
// its compiled schema (nil in URL mode). It is immutable and safe for
// concurrent use.
type Question struct {
	Params Params
	Schema *Schema
}

// New parses the params of elicitation/create ([ParseParams]) and compiles
// the requested schema of a form-mode question ([Compile]). Malformed params
// return an error wrapping acp.ErrInvalidParams (the agent gets -32602);
// a question acpmux cannot serve (another mode, a URL whose scheme is not
// http or https, a schema outside the subset) returns an error wrapping
// [ErrUnsupported] (the broker answers decline).
func New(params []byte) (*Question, error) {
	p, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	q := &Question{Params: p}
	switch p.Mode {
	case ModeForm:
		if q.Schema, err = Compile(p.RequestedSchema); err != nil {
			return nil, err
		}
	case ModeURL:
		// A javascript: or data: URL would run in the page that shows it.
		if u, _ := url.Parse(p.URL); u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("%w: url scheme %q: only http and https are opened", ErrUnsupported, u.Scheme)
		}
	default:
		return nil, fmt.Errorf("%w: mode %q", ErrUnsupported, p.Mode)
	}
	return q, nil
}

// Complete is the params of elicitation/complete (agent → client
// notification; ACP schema CompleteElicitationNotification): the URL-mode
// elicitation ElicitationID has ended. Meta is kept raw.
type Complete struct {
	ElicitationID string          `json:"elicitationId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// ParseComplete decodes the params of elicitation/complete. Params that are
// not one JSON object, a duplicate or case-variant member, or a missing or
// non-string elicitationId return an error wrapping acp.ErrInvalidParams.
func ParseComplete(data []byte) (Complete, error) {
	m, err := acp.DecodeObject(data, []string{"elicitationId", "_meta"}, false)
	if err != nil {
		return Complete{}, err
	}
	id, err := acp.DecodeString(m["elicitationId"], "elicitationId")
	if err != nil {
		return Complete{}, err
	}
	meta, _ := present(m, "_meta")
	return Complete{ElicitationID: id, Meta: meta}, nil
}
