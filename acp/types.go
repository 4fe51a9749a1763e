package acp

import "encoding/json"

// SessionID identifies an ACP session (ACP "Session Setup").
type SessionID = string

// PermissionOptionKind is the UI hint of a permission option (ACP schema
// PermissionOptionKind). The agent decides semantics from the optionId; the
// kind only says how to present it. Unknown kinds are preserved.
type PermissionOptionKind string

// The permission option kinds of ACP v1.
const (
	AllowOnce    PermissionOptionKind = "allow_once"
	AllowAlways  PermissionOptionKind = "allow_always"
	RejectOnce   PermissionOptionKind = "reject_once"
	RejectAlways PermissionOptionKind = "reject_always"
)

// PermissionOption is one choice offered with session/request_permission
// (ACP schema PermissionOption): optionId (opaque), name, kind, all required.
// See https://agentclientprotocol.com/protocol/v1/tool-calls#requesting-permission
type PermissionOption struct {
	OptionID string               `json:"optionId"`
	Name     string               `json:"name"`
	Kind     PermissionOptionKind `json:"kind"`
	Meta     json.RawMessage      `json:"_meta,omitempty"`
}

// ToolCallUpdate is the toolCall of a permission request and the payload of
// tool_call / tool_call_update session updates (ACP schema ToolCallUpdate).
// Only toolCallId is required; content and locations replace whole arrays.
// RawInput is kept raw: its shape is the agent's own.
type ToolCallUpdate struct {
	ToolCallID string          `json:"toolCallId"`
	Title      *string         `json:"title,omitempty"`
	Kind       *string         `json:"kind,omitempty"`
	Status     *string         `json:"status,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
	Locations  json.RawMessage `json:"locations,omitempty"`
	RawInput   json.RawMessage `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage `json:"rawOutput,omitempty"`
}

// RequestPermissionParams are the params of session/request_permission
// (agent → client request; ACP schema RequestPermissionRequest).
type RequestPermissionParams struct {
	SessionID SessionID          `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
}

// Outcome values of RequestPermissionOutcome.
const (
	OutcomeSelected  = "selected"
	OutcomeCancelled = "cancelled"
)

// RequestPermissionOutcome is {"outcome":"selected","optionId":…} or
// {"outcome":"cancelled"} (ACP schema RequestPermissionOutcome).
type RequestPermissionOutcome struct {
	Outcome  string          `json:"outcome"`
	OptionID string          `json:"optionId,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission
// (ACP schema RequestPermissionResponse).
type RequestPermissionResponse struct {
	Outcome RequestPermissionOutcome `json:"outcome"`
	Meta    json.RawMessage          `json:"_meta,omitempty"`
}

// SessionNotification is the params of a session/update notification; the
// update is kept raw (ACP schema SessionNotification).
type SessionNotification struct {
	SessionID SessionID       `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// CancelRequestParams are the params of $/cancel_request (ACP RFD
// request-cancellation): the id of the request to cancel, raw.
type CancelRequestParams struct {
	RequestID json.RawMessage `json:"requestId"`
}
