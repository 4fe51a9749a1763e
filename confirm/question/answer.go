package question

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/acpmux/acpmux/acp"
)

// Action is what the user did with a question (ACP schema
// CreateElicitationResponse, member action).
type Action string

// The actions of ACP v1.
const (
	// Accept: the user submitted the form (with content) or agreed to open
	// the URL (without content).
	Accept Action = "accept"
	// Decline: the user explicitly refused.
	Decline Action = "decline"
	// Cancel: the user dismissed the question without choosing; acpmux
	// also answers cancel on timeout and session cancel.
	Cancel Action = "cancel"
)

// Answer is a host's answer to a question: {"action", "content"?}. Content
// maps property names to values; it is nil when absent. Before
// [Question.Validate] its values are whatever the host sent (as
// [DecodeAnswer] decodes them: string, json.Number, bool, []any,
// map[string]any, nil; or Go values: string, float64, int, int64, bool,
// []string). After Validate, a string property holds a string, number a
// float64, integer an int64, boolean a bool, array a []string.
type Answer struct {
	Action  Action         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// FieldError is a refused answer: Field names what was wrong ("action",
// "content", "content.NAME" for a property, "" for the body as a whole) and
// Reason says why. It wraps acp.ErrInvalidParams, so a relay answers it
// with -32602 (acp.AsError) and the HTTP API with 400; the question stays
// open and the host may try again.
type FieldError struct {
	Field  string
	Reason string
}

// Error returns "jsonrpc2 error -32602: invalid params: FIELD: REASON".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return acp.ErrInvalidParams.Error() + ": " + e.Reason
	}
	return acp.ErrInvalidParams.Error() + ": " + e.Field + ": " + e.Reason
}

// Unwrap returns acp.ErrInvalidParams.
func (e *FieldError) Unwrap() error { return acp.ErrInvalidParams }

// contentField names the property name of the answer's content.
func contentField(name string) string { return "content." + name }

// DecodeAnswer decodes a host's answer body, strictly: exactly one JSON
// object with the members action (a string), content (an object, or null
// for none) and _meta (ignored: it never reaches the agent). An unknown
// member, a duplicate or case-variant member name (also among content's
// members), or a member of the wrong JSON type returns a [*FieldError]. It
// does not check the answer against the question; [Question.Validate] does.
// This is both the body of POST /v1/sessions/{sessionId}/decisions/{decisionId}
// for a question and the result an ACP host sends (CreateElicitationResponse).
func DecodeAnswer(data []byte) (Answer, error) {
	m, err := acp.DecodeObject(data, []string{"action", "content", "_meta"}, true)
	if err != nil {
		return Answer{}, &FieldError{Reason: trimInvalid(err)}
	}
	raw, ok := m["action"]
	if !ok {
		return Answer{}, &FieldError{Field: "action", Reason: "is required"}
	}
	action, err := acp.DecodeString(raw, "action")
	if err != nil {
		return Answer{}, &FieldError{Field: "action", Reason: "must be a string"}
	}
	a := Answer{Action: Action(action)}
	raw, ok = present(m, "content")
	if !ok {
		return a, nil
	}
	cm, err := acp.DecodeObject(raw, nil, false)
	if err != nil {
		return Answer{}, &FieldError{Field: "content", Reason: trimInvalid(err)}
	}
	a.Content = make(map[string]any, len(cm))
	for name, v := range cm {
		a.Content[name] = decodeValue(v)
	}
	return a, nil
}

// trimInvalid drops the -32602 prefix that FieldError adds itself.
func trimInvalid(err error) string {
	return strings.TrimPrefix(err.Error(), acp.ErrInvalidParams.Error()+": ")
}

// decodeValue decodes one valid JSON value, numbers as json.Number.
func decodeValue(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	dec.Decode(&v)
	return v
}

// Validate checks a against q and returns the answer the agent may receive,
// its content rebuilt from the checked values (see [Answer]). The rules
// (ACP "Elicitation"):
//
//   - action is accept, decline or cancel, exactly;
//   - decline and cancel carry no content, nor does accept in URL mode;
//   - accept in form mode: content has only the schema's properties, every
//     required property, and each value of its property's type (no string
//     "5" for a number; an integer has no fractional part and lies within
//     ±2^53), within its limits (length in code points, pattern, format,
//     minimum and maximum inclusive), a member of its enum, and for an
//     array distinct members within minItems and maxItems. No content is
//     the same as {}.
//
// A refusal is a [*FieldError] naming the field; the first one found (the
// action, then unknown members in name order, then the properties in
// schema order) is returned. Safe for concurrent use.
func (q *Question) Validate(a Answer) (Answer, error) {
	switch a.Action {
	case Accept:
	case Decline, Cancel:
		if a.Content != nil {
			return Answer{}, &FieldError{Field: "content", Reason: fmt.Sprintf("must be absent when action is %s", a.Action)}
		}
		return Answer{Action: a.Action}, nil
	default:
		return Answer{}, &FieldError{Field: "action", Reason: fmt.Sprintf("%q is not accept, decline or cancel", string(a.Action))}
	}
	if q.Params.Mode != ModeForm {
		if a.Content != nil {
			return Answer{}, &FieldError{Field: "content", Reason: "must be absent in url mode"}
		}
		return Answer{Action: Accept}, nil
	}
	content, err := q.Schema.content(a.Content)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Action: Accept, Content: content}, nil
}

// content checks the content of an accepted form-mode answer.
func (s *Schema) content(c map[string]any) (map[string]any, error) {
	names := make([]string, 0, len(c))
	for name := range c {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := s.byName[name]; !ok {
			return nil, &FieldError{Field: contentField(name), Reason: "is not a property of the requested schema"}
		}
	}
	out := make(map[string]any, len(c))
	for i := range s.Properties {
		p := &s.Properties[i]
		v, ok := c[p.Name]
		if !ok {
			if p.Required {
				return nil, &FieldError{Field: contentField(p.Name), Reason: "is required"}
			}
			continue
		}
		norm, reason := p.check(v)
		if reason != "" {
			return nil, &FieldError{Field: contentField(p.Name), Reason: reason}
		}
		out[p.Name] = norm
	}
	return out, nil
}

// Response returns the result of elicitation/create for a, which must be
// an answer [Question.Validate] returned: {"action":"decline"},
// {"action":"cancel"}, {"action":"accept"} in URL mode, or
// {"action":"accept","content":{…}} in form mode (members in name order).
// These are exactly the values Validate checked, encoded here; a host's
// bytes never pass through. Response panics on a content value of a type
// Validate never returns (a programmer error).
func Response(a Answer) json.RawMessage {
	type response struct {
		Action  Action          `json:"action"`
		Content json.RawMessage `json:"content,omitempty"`
	}
	r := response{Action: a.Action}
	if a.Content != nil {
		for name, v := range a.Content {
			switch v.(type) {
			case string, float64, int64, bool, []string:
			default:
				panic(fmt.Sprintf("question.Response: content %q holds a %T, not a validated value", name, v))
			}
		}
		r.Content, _ = json.Marshal(a.Content) // sorted keys; validated values always encode
	}
	b, _ := json.Marshal(r)
	return b
}
