package streamjson

import (
	"encoding/json"
	"fmt"

	"github.com/acpmux/acpmux/acp"
)

// Parse decodes one stream-json line (without its newline). It returns
// [*Unknown] for an unknown type or system subtype and a [*ControlRequest]
// holding [*UnknownRequest] for an unknown control request subtype. An
// error wraps ErrMalformed. Members this package does not know are
// ignored, but a line that peers could read two ways is malformed: a
// member name twice in one object at any depth (compared after
// unescaping), or a member spelled in another letter case than a known
// one ("Type", a control_response's "Request_ID"): encoding/json keeps
// the last duplicate and matches names case-insensitively, so such a line
// must never become an answer (docs/stream-json.md).
func Parse(line []byte) (Message, error) {
	var head struct {
		Type    *string `json:"type"`
		Subtype string  `json:"subtype"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := ambiguous(line, head.Type); err != nil {
		return nil, err
	}
	if head.Type == nil {
		return nil, fmt.Errorf("%w: no \"type\" member", ErrMalformed)
	}
	var m Message
	switch *head.Type {
	case TypeUser:
		m = &User{}
	case TypeAssistant:
		m = &Assistant{}
	case TypeResult:
		m = &Result{}
	case TypeStreamEvent:
		m = &StreamEvent{}
	case TypeKeepAlive:
		m = &KeepAlive{}
	case TypeControlResponse:
		m = &ControlResponse{}
	case TypeControlCancelRequest:
		m = &ControlCancelRequest{}
	case TypeControlRequest:
		return parseControlRequest(line)
	case TypeSystem:
		switch head.Subtype {
		case "init":
			m = &SystemInit{}
		case "status":
			m = &SystemStatus{}
		}
	}
	if m == nil {
		return &Unknown{Type: *head.Type, Subtype: head.Subtype, Raw: append(json.RawMessage(nil), line...)}, nil
	}
	if err := json.Unmarshal(line, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, *head.Type, err)
	}
	return m, nil
}

// parseControlRequest decodes a control_request line.
func parseControlRequest(line []byte) (Message, error) {
	var env struct {
		RequestID *string         `json:"request_id"`
		Request   json.RawMessage `json:"request"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, fmt.Errorf("%w: control_request: %v", ErrMalformed, err)
	}
	if env.RequestID == nil {
		return nil, fmt.Errorf("%w: control_request without request_id", ErrMalformed)
	}
	var sub struct {
		Subtype *string `json:"subtype"`
	}
	if err := json.Unmarshal(env.Request, &sub); err != nil || sub.Subtype == nil {
		return nil, fmt.Errorf("%w: control_request %q: request is not an object with a subtype", ErrMalformed, *env.RequestID)
	}
	var p RequestPayload
	raw := append(json.RawMessage(nil), env.Request...)
	switch *sub.Subtype {
	case SubtypeInitialize:
		return &ControlRequest{RequestID: *env.RequestID, Request: &InitializeRequest{Raw: raw}}, nil
	case SubtypeCanUseTool:
		p = &CanUseToolRequest{}
	case SubtypeInterrupt:
		p = &InterruptRequest{}
	case SubtypeSetPermissionMode:
		p = &SetPermissionModeRequest{}
	case SubtypeSetModel:
		p = &SetModelRequest{}
	case SubtypeElicitation:
		p = &ElicitationRequest{}
	default:
		return &ControlRequest{RequestID: *env.RequestID, Request: &UnknownRequest{Type: *sub.Subtype, Raw: raw}}, nil
	}
	if err := json.Unmarshal(env.Request, p); err != nil {
		return nil, fmt.Errorf("%w: control_request %s: %v", ErrMalformed, *sub.Subtype, err)
	}
	return &ControlRequest{RequestID: *env.RequestID, Request: p}, nil
}

// ambiguous returns an error wrapping ErrMalformed when the valid JSON
// object line has a duplicate member at any depth, a case variant of
// "type" or "subtype", or, for a control_response, a case variant of a
// member of its envelope or response body.
func ambiguous(line []byte, typ *string) error {
	if dup := acp.DuplicateKey(line); dup != "" {
		return fmt.Errorf("%w: duplicate member %q", ErrMalformed, dup)
	}
	if k := caseVariant(line, "type", "subtype"); k != "" {
		return fmt.Errorf("%w: member %q in another letter case", ErrMalformed, k)
	}
	if typ == nil || *typ != TypeControlResponse {
		return nil
	}
	if k := caseVariant(line, "response"); k != "" {
		return fmt.Errorf("%w: control_response: member %q in another letter case", ErrMalformed, k)
	}
	if k := caseVariant(acp.MemberBytes(line, "response"), "subtype", "request_id", "response", "error"); k != "" {
		return fmt.Errorf("%w: control_response: member %q in another letter case", ErrMalformed, k)
	}
	return nil
}
