package streamjson

import (
	"encoding/json"
	"fmt"
)

// Control request subtypes this package has types for. Any other subtype
// decodes as [*UnknownRequest].
const (
	SubtypeInitialize        = "initialize"
	SubtypeCanUseTool        = "can_use_tool"
	SubtypeInterrupt         = "interrupt"
	SubtypeSetPermissionMode = "set_permission_mode"
	SubtypeSetModel          = "set_model"
	SubtypeElicitation       = "elicitation"
)

// Control response subtypes.
const (
	ResponseSuccess = "success"
	ResponseError   = "error"
)

// ControlRequest asks the other side for something and wants exactly one
// [ControlResponse] with the same RequestID (unique among the sender's
// pending requests). Request is one of the *Request types below.
type ControlRequest struct {
	RequestID string         `json:"request_id"`
	Request   RequestPayload `json:"request"`
}

// RequestPayload is the request member of a [ControlRequest]; Subtype
// returns its "subtype".
type RequestPayload interface{ Subtype() string }

// InitializeRequest is the script's first control request. Its fields
// (hooks, sdkMcpServers, systemPrompt, agents, …) are kept raw in Raw.
type InitializeRequest struct {
	Raw json.RawMessage `json:"-"`
}

// CanUseToolRequest asks the script whether a tool call may run (acpmux →
// script). Input is the tool call's raw input, byte for byte.
// PermissionSuggestions holds PermissionUpdate objects (Claude) or
// allow/deny suggestions (Qwen), raw. BlockedPath is a path string or
// null (Qwen writes "blocked_path":null), raw.
type CanUseToolRequest struct {
	ToolName                string          `json:"tool_name"`
	DisplayName             string          `json:"display_name,omitempty"`
	Input                   json.RawMessage `json:"input"`
	ToolUseID               string          `json:"tool_use_id"`
	Title                   string          `json:"title,omitempty"`
	Description             string          `json:"description,omitempty"`
	DecisionReason          string          `json:"decision_reason,omitempty"`
	PermissionSuggestions   json.RawMessage `json:"permission_suggestions,omitempty"`
	BlockedPath             json.RawMessage `json:"blocked_path,omitempty"`
	SuppressAlwaysAllowRule bool            `json:"suppress_always_allow_rule,omitempty"`
}

// InterruptRequest asks to stop the running turn (script → acpmux).
type InterruptRequest struct{}

// SetPermissionModeRequest asks to switch the permission mode (default,
// plan, acceptEdits, … for Claude; default, plan, auto-edit, yolo for Qwen).
type SetPermissionModeRequest struct {
	Mode string `json:"mode"`
}

// SetModelRequest asks to switch the model; Model nil or "default" means
// the default model.
type SetModelRequest struct {
	Model *string `json:"model"`
}

// ElicitationRequest asks the script for input on behalf of an elicitation
// (acpmux → script): a form (Mode "form", RequestedSchema) or a URL to
// open (Mode "url", URL). The script answers with a control_response
// whose response is {"action", "content"}, decoded and validated as any
// host's answer to a question (docs/stream-json.md).
type ElicitationRequest struct {
	MCPServerName   string          `json:"mcp_server_name"`
	Message         string          `json:"message"`
	Mode            string          `json:"mode,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitation_id,omitempty"`
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
}

// UnknownRequest is a control request of a subtype this package does not
// know; Raw is the whole request object. Answer it with an error response.
type UnknownRequest struct {
	Type string          `json:"-"`
	Raw  json.RawMessage `json:"-"`
}

// Subtype implements RequestPayload.
func (*InitializeRequest) Subtype() string { return SubtypeInitialize }

// Subtype implements RequestPayload.
func (*CanUseToolRequest) Subtype() string { return SubtypeCanUseTool }

// Subtype implements RequestPayload.
func (*InterruptRequest) Subtype() string { return SubtypeInterrupt }

// Subtype implements RequestPayload.
func (*SetPermissionModeRequest) Subtype() string { return SubtypeSetPermissionMode }

// Subtype implements RequestPayload.
func (*SetModelRequest) Subtype() string { return SubtypeSetModel }

// Subtype implements RequestPayload.
func (*ElicitationRequest) Subtype() string { return SubtypeElicitation }

// Subtype implements RequestPayload.
func (u *UnknownRequest) Subtype() string { return u.Type }

// ControlResponse answers a [ControlRequest].
type ControlResponse struct {
	Response ResponseBody `json:"response"`
}

// ResponseBody is the response member of a [ControlResponse]: Subtype
// "success" with the answer in Response (may be absent), or "error" with
// Error (a string; Qwen may send an object {"message":…}). Use
// [ResponseBody.ErrorText] to read either form.
type ResponseBody struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// ErrorText returns the error of an error response as text: the string,
// or the message member of an object, or the raw JSON.
func (r ResponseBody) ErrorText() string {
	var s string
	if json.Unmarshal(r.Error, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(r.Error, &o) == nil && o.Message != "" {
		return o.Message
	}
	return string(r.Error)
}

// ControlCancelRequest withdraws the sender's pending control request
// RequestID; it gets no reply. Qwen allows RequestID to be absent.
type ControlCancelRequest struct {
	RequestID string `json:"request_id,omitempty"`
}

// MessageType implements Message.
func (*ControlRequest) MessageType() string { return TypeControlRequest }

// MessageType implements Message.
func (*ControlResponse) MessageType() string { return TypeControlResponse }

// MessageType implements Message.
func (*ControlCancelRequest) MessageType() string { return TypeControlCancelRequest }

func (u *UnknownRequest) appendJSON(b []byte) ([]byte, error) { return appendRaw(b, u.Raw) }

func (r *InitializeRequest) appendJSON(b []byte) ([]byte, error) {
	if len(r.Raw) > 0 {
		return appendRaw(b, r.Raw)
	}
	return append(b, `{"subtype":"initialize"}`...), nil
}

// appendPayload writes a request payload as an object led by its subtype.
func appendPayload(b []byte, p RequestPayload) ([]byte, error) {
	if p == nil {
		return b, fmt.Errorf("control request without request")
	}
	if a, ok := p.(appender); ok {
		return a.appendJSON(b)
	}
	b = append(b, `{"subtype":`...)
	b = appendString(b, p.Subtype())
	first := false
	b, err := appendFields(b, reflectOf(p).Elem(), &first)
	return append(b, '}'), err
}

// SuccessResponse returns the success response to request id with v
// (encoded with [Marshal]; nil means no response member).
func SuccessResponse(id string, v any) (*ControlResponse, error) {
	r := &ControlResponse{Response: ResponseBody{Subtype: ResponseSuccess, RequestID: id}}
	if v != nil {
		b, err := Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode control response: %w", err)
		}
		r.Response.Response = b
	}
	return r, nil
}

// ErrorResponse returns the error response to request id with message.
func ErrorResponse(id, message string) *ControlResponse {
	e, _ := Marshal(message)
	return &ControlResponse{Response: ResponseBody{Subtype: ResponseError, RequestID: id, Error: e}}
}
