package streamjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acpmux/acpmux/acp"
)

// StaleApprovalMessage is the text a refused approval carries to the agent
// when the script's updatedInput is not the input it was asked about: the
// same fixed message as acpmux's plan-mode gate uses for a stale approval
// (docs/plan-mode.md, fixed messages).
const StaleApprovalMessage = "Plan-mode shell approval is no longer valid because the mode, permission policy, or exact invocation changed. Submit a new tool call."

// ErrRefused is wrapped by every error of [AnswerPermission]: the answer is
// not an approval and the permission request must be refused (fail closed).
var ErrRefused = errors.New("permission answer refused")

// ErrStaleApproval is the refusal of an allow whose updatedInput differs
// from the snapshotted input; answer the agent with StaleApprovalMessage.
var ErrStaleApproval = fmt.Errorf("%w: updatedInput differs from the input asked about", ErrRefused)

// PermissionAsk is what acpmux shows a script about one permission request
// (ACP session/request_permission, https://agentclientprotocol.com/protocol/v1/tool-calls#requesting-permission).
// RawInput is the snapshotted raw input, sent byte for byte as the
// can_use_tool input ("{}" when empty). ToolName may be empty: the
// dialect's name for Kind is used. OneOff marks an exact one-off prompt of
// the plan-mode gate (docs/plan-mode.md): no persistent grant is offered.
type PermissionAsk struct {
	RequestID  string
	ToolCallID string
	ToolName   string
	Title      string
	Kind       string
	RawInput   json.RawMessage
	Warnings   []string
	Options    []acp.PermissionOption
	OneOff     bool
	Dialect    Dialect
}

// NewPermissionAsk fills a PermissionAsk from the raw params of a
// session/request_permission request: tool call id, title, kind, rawInput
// and options, and the tool name from toolCall.name or toolCall._meta
// (toolName, or claudeCode.toolName) when the agent sent one. Malformed
// params return an error wrapping acp.ErrInvalidParams.
func NewPermissionAsk(requestID string, params json.RawMessage, warnings []string, oneOff bool, d Dialect) (PermissionAsk, error) {
	var p acp.RequestPermissionParams
	if err := json.Unmarshal(params, &p); err != nil {
		return PermissionAsk{}, fmt.Errorf("%w: session/request_permission: %v", acp.ErrInvalidParams, err)
	}
	a := PermissionAsk{RequestID: requestID, ToolCallID: p.ToolCall.ToolCallID, RawInput: p.ToolCall.RawInput,
		Warnings: warnings, Options: p.Options, OneOff: oneOff, Dialect: d}
	if p.ToolCall.Title != nil {
		a.Title = *p.ToolCall.Title
	}
	if p.ToolCall.Kind != nil {
		a.Kind = *p.ToolCall.Kind
	}
	a.ToolName = toolNameOf(acp.MemberBytes(params, "toolCall"))
	return a, nil
}

// toolNameOf returns the tool name an agent put in a tool call, or "".
func toolNameOf(tc []byte) string {
	if n := acp.MemberString(tc, "name"); n != "" {
		return n
	}
	meta := acp.MemberBytes(tc, "_meta")
	if n := acp.MemberString(meta, "toolName"); n != "" {
		return n
	}
	return acp.MemberString(acp.MemberBytes(meta, "claudeCode"), "toolName")
}

// input returns the input sent to the script.
func (a PermissionAsk) input() json.RawMessage {
	if len(a.RawInput) == 0 || string(a.RawInput) == "null" {
		return json.RawMessage("{}")
	}
	return a.RawInput
}

func (a PermissionAsk) toolName() string {
	if a.ToolName != "" {
		return a.ToolName
	}
	return a.Dialect.ToolName(a.Kind)
}

// option returns the first offered option of kind k.
func (a PermissionAsk) option(k acp.PermissionOptionKind) (acp.PermissionOption, bool) {
	for _, o := range a.Options {
		if o.Kind == k {
			return o, true
		}
	}
	return acp.PermissionOption{}, false
}

// persistent reports whether a persistent grant may be offered.
func (a PermissionAsk) persistent() bool {
	_, ok := a.option(acp.AllowAlways)
	return ok && !a.OneOff
}

// CanUseTool returns the can_use_tool control request for a: tool_name,
// input (byte for byte), tool_use_id, title, description and
// decision_reason carrying the warnings (one a line; description is the
// title when there are none), suppress_always_allow_rule for a one-off, and
// permission_suggestions: for Claude one addRules PermissionUpdate only
// when an allow_always option is offered and a is not a one-off; for Qwen
// an allow and a deny suggestion whose descriptions carry the warnings
// (and "blocked_path":null).
func CanUseTool(a PermissionAsk) *ControlRequest {
	warn := strings.Join(a.Warnings, "\n")
	r := &CanUseToolRequest{ToolName: a.toolName(), Input: a.input(), ToolUseID: a.ToolCallID, Title: a.Title,
		Description: a.Title, DecisionReason: warn, SuppressAlwaysAllowRule: a.OneOff}
	if warn != "" {
		r.Description = warn
	}
	switch a.Dialect {
	case DialectQwen:
		r.PermissionSuggestions = qwenSuggestions(a, r.Description)
		r.BlockedPath = json.RawMessage("null")
	default:
		if a.persistent() {
			r.PermissionSuggestions = claudeSuggestions(a, r.ToolName)
		}
	}
	return &ControlRequest{RequestID: a.RequestID, Request: r}
}

// PermissionUpdate is a Claude permission update (permission_suggestions
// and updatedPermissions): addRules with rules and behavior here.
type PermissionUpdate struct {
	Type        string           `json:"type"`
	Rules       []PermissionRule `json:"rules,omitempty"`
	Behavior    string           `json:"behavior,omitempty"`
	Mode        string           `json:"mode,omitempty"`
	Directories []string         `json:"directories,omitempty"`
	Destination string           `json:"destination"`
}

// PermissionRule is one rule of a PermissionUpdate.
type PermissionRule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

func claudeSuggestions(a PermissionAsk, tool string) json.RawMessage {
	u := []PermissionUpdate{{Type: "addRules", Rules: []PermissionRule{{ToolName: tool, RuleContent: a.Title}},
		Behavior: "allow", Destination: "session"}}
	b, _ := Marshal(u)
	return b
}

// QwenSuggestion is a Qwen permission suggestion.
type QwenSuggestion struct {
	Type        string `json:"type"` // allow, deny or modify
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

func qwenSuggestions(a PermissionAsk, desc string) json.RawMessage {
	allow, deny := "Allow", "Deny"
	if o, ok := a.option(acp.AllowOnce); ok && o.Name != "" {
		allow = o.Name
	}
	if o, ok := a.rejectOption(); ok && o.Name != "" {
		deny = o.Name
	}
	b, _ := Marshal([]QwenSuggestion{{Type: "allow", Label: allow, Description: desc}, {Type: "deny", Label: deny, Description: desc}})
	return b
}

// rejectOption returns the offered reject_once option.
func (a PermissionAsk) rejectOption() (acp.PermissionOption, bool) { return a.option(acp.RejectOnce) }

// Verdict is the outcome of a script's answer to a can_use_tool request:
// the offered option to select, and for a deny the script's message (for
// logs and the journal; it is not sent to the agent) and whether the script
// asked to interrupt the turn.
type Verdict struct {
	OptionID  string
	Kind      acp.PermissionOptionKind
	Message   string
	Interrupt bool
}

// permissionResult is a PermissionResult as a script sends it.
type permissionResult struct {
	Behavior           string          `json:"behavior"`
	UpdatedInput       json.RawMessage `json:"updatedInput"`
	UpdatedPermissions json.RawMessage `json:"updatedPermissions"`
	Message            string          `json:"message"`
	Interrupt          bool            `json:"interrupt"`
	ToolUseID          *string         `json:"toolUseID"`
}

// AnswerPermission turns the script's control response r to the
// can_use_tool request of a into the option to select. behavior "allow"
// selects the offered allow_once option, or allow_always when
// updatedPermissions is a non-empty array, one was offered and a is not a
// one-off; "deny" selects the offered reject_once option. updatedInput, when
// present (null included), must be equal as a JSON value to a's input,
// else the error is ErrStaleApproval. An error response, a request_id or toolUseID that does
// not match, duplicate members, an unknown behavior, or an option that was
// not offered return an error wrapping ErrRefused: refuse the request.
func AnswerPermission(a PermissionAsk, r ResponseBody) (Verdict, error) {
	if r.RequestID != a.RequestID {
		return Verdict{}, fmt.Errorf("%w: answer to request %q, asked %q", ErrRefused, r.RequestID, a.RequestID)
	}
	switch r.Subtype {
	case ResponseSuccess:
	case ResponseError:
		return Verdict{}, fmt.Errorf("%w: the script answered with an error: %s", ErrRefused, r.ErrorText())
	default:
		return Verdict{}, fmt.Errorf("%w: control response subtype %q", ErrRefused, r.Subtype)
	}
	var p permissionResult
	if len(r.Response) == 0 || acp.DuplicateKey(r.Response) != "" || json.Unmarshal(r.Response, &p) != nil ||
		caseVariant(r.Response, "behavior", "updatedInput", "updatedPermissions", "message", "interrupt", "toolUseID") != "" {
		return Verdict{}, fmt.Errorf("%w: malformed permission result", ErrRefused)
	}
	if p.ToolUseID != nil && *p.ToolUseID != a.ToolCallID {
		return Verdict{}, fmt.Errorf("%w: toolUseID %q, asked about %q", ErrRefused, *p.ToolUseID, a.ToolCallID)
	}
	switch p.Behavior {
	case "allow":
		return allow(a, p)
	case "deny":
		o, ok := a.rejectOption()
		if !ok {
			return Verdict{}, fmt.Errorf("%w: deny, but no reject_once option was offered", ErrRefused)
		}
		return Verdict{OptionID: o.OptionID, Kind: o.Kind, Message: p.Message, Interrupt: p.Interrupt}, nil
	}
	return Verdict{}, fmt.Errorf("%w: behavior %q", ErrRefused, p.Behavior)
}

func allow(a PermissionAsk, p permissionResult) (Verdict, error) {
	if len(p.UpdatedInput) > 0 && !JSONEqual(p.UpdatedInput, a.input()) { // null too: neither SDK sends it
		return Verdict{}, ErrStaleApproval
	}
	var updates []json.RawMessage
	if len(p.UpdatedPermissions) > 0 && string(p.UpdatedPermissions) != "null" {
		if err := json.Unmarshal(p.UpdatedPermissions, &updates); err != nil {
			return Verdict{}, fmt.Errorf("%w: updatedPermissions is not an array", ErrRefused)
		}
	}
	if len(updates) > 0 && a.persistent() {
		o, _ := a.option(acp.AllowAlways)
		return Verdict{OptionID: o.OptionID, Kind: o.Kind}, nil
	}
	o, ok := a.option(acp.AllowOnce)
	if !ok {
		return Verdict{}, fmt.Errorf("%w: allow, but no allow_once option was offered", ErrRefused)
	}
	return Verdict{OptionID: o.OptionID, Kind: o.Kind}, nil
}
