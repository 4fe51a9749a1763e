package question

import (
	"encoding/json"
	"time"
)

// Kind is the kind of every question decision in the HTTP API ("question";
// a permission decision is "permission").
const Kind = "question"

// Option is one choice of a question whose schema is a single select: the
// answer {"action":"accept","content":{FIELD: OptionID}} picks it, where
// FIELD is [View].Field. Name is the option's title (OptionID itself when
// the schema gave none).
type Option struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
}

// View is a question as the HTTP API and the CLI show it (JSON in
// camelCase; docs/decisions.md, "Questions"). [Question.View] fills what
// the question says; the broker fills ID, Status, Reason, Answer,
// ResolvedBy and the times. Options is non-nil (empty unless the schema has
// exactly one property, a string with enum or oneOf); AllowFreeText is true
// when the schema has exactly one property, a string without enum or
// format; Field names that one property. Answer is null while open.
type View struct {
	ID              string          `json:"id"`
	SessionID       string          `json:"sessionId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	Kind            string          `json:"kind"`
	Mode            Mode            `json:"mode"`
	Prompt          string          `json:"prompt"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	Field           string          `json:"field,omitempty"`
	Options         []Option        `json:"options"`
	AllowFreeText   bool            `json:"allowFreeText"`
	Status          string          `json:"status"`
	Reason          string          `json:"reason,omitempty"`
	Answer          *Answer         `json:"answer"`
	ResolvedBy      string          `json:"resolvedBy,omitempty"`
	CreatedAt       time.Time       `json:"createdAt"`
	Deadline        time.Time       `json:"deadline"`
	ClosedAt        *time.Time      `json:"closedAt,omitempty"`
}

// View returns the parts of q's view that the question itself determines:
// Kind, SessionID, ToolCallID, Mode, Prompt (the message), RequestedSchema
// (raw, as the agent sent it), URL, ElicitationID, Field, Options and
// AllowFreeText. Status is "open".
func (q *Question) View() View {
	p := q.Params
	v := View{Kind: Kind, SessionID: p.SessionID, ToolCallID: p.ToolCallID, Mode: p.Mode,
		Prompt: p.Message, URL: p.URL, ElicitationID: p.ElicitationID, Options: []Option{}, Status: "open"}
	if q.Schema == nil {
		return v
	}
	v.RequestedSchema = q.Schema.Raw
	if len(q.Schema.Properties) != 1 {
		return v
	}
	prop := q.Schema.Properties[0]
	if prop.Type != TypeString {
		return v
	}
	switch {
	case prop.isEnum():
		v.Field = prop.Name
		for _, o := range prop.Enum {
			name := o.Title
			if name == "" {
				name = o.Const
			}
			v.Options = append(v.Options, Option{OptionID: o.Const, Name: name})
		}
	case prop.Format == "":
		v.Field, v.AllowFreeText = prop.Name, true
	}
	return v
}
