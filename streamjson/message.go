package streamjson

import "encoding/json"

// Message is one stream-json line. The concrete types are [*User],
// [*Assistant], [*SystemInit], [*SystemStatus], [*Result], [*StreamEvent],
// [*ControlRequest], [*ControlResponse], [*ControlCancelRequest],
// [*KeepAlive] and [*Unknown]. MessageType returns the "type" member.
type Message interface{ MessageType() string }

// The message types ("type" member) of stream-json.
const (
	TypeUser                 = "user"
	TypeAssistant            = "assistant"
	TypeSystem               = "system"
	TypeResult               = "result"
	TypeStreamEvent          = "stream_event"
	TypeControlRequest       = "control_request"
	TypeControlResponse      = "control_response"
	TypeControlCancelRequest = "control_cancel_request"
	TypeKeepAlive            = "keep_alive"
)

// User is a user message. From a script it is a prompt (Content is a
// string or text and image blocks); from acpmux it carries tool_result
// blocks of finished tool calls.
type User struct {
	Message         UserMessage     `json:"message"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid,omitempty"`
	Priority        string          `json:"priority,omitempty"` // now, next or later (Claude)
	IsSynthetic     bool            `json:"isSynthetic,omitempty"`
	ToolUseResult   json.RawMessage `json:"tool_use_result,omitempty"`
}

// UserMessage is the Anthropic Messages user message of a [User].
type UserMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Assistant is an assistant message: one Anthropic Messages message whose
// content holds text, thinking or tool_use blocks.
type Assistant struct {
	Message         AssistantMessage `json:"message"`
	ParentToolUseID *string          `json:"parent_tool_use_id"`
	SessionID       string           `json:"session_id"`
	UUID            string           `json:"uuid,omitempty"`
	Error           string           `json:"error,omitempty"`
}

// AssistantMessage is the Anthropic Messages message of an [Assistant].
// StopReason is null on Claude's stream-json output.
type AssistantMessage struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"` // "message"
	Role       string          `json:"role"` // "assistant"
	Model      string          `json:"model"`
	Content    []ContentBlock  `json:"content"`
	StopReason *string         `json:"stop_reason"`
	Usage      json.RawMessage `json:"usage,omitempty"`
}

// SystemInit is system/init, sent once before the first assistant message:
// the session's id, working directory, tools, model and mode. Claude Code
// writes permissionMode and claude_code_version, Qwen Code permission_mode
// and qwen_code_version; Capabilities is an array (Claude) or an object
// (Qwen), kept raw.
type SystemInit struct {
	SessionID          string          `json:"session_id"`
	UUID               string          `json:"uuid,omitempty"`
	Cwd                string          `json:"cwd"`
	Model              string          `json:"model"`
	PermissionMode     string          `json:"permissionMode,omitempty"`
	PermissionModeQwen string          `json:"permission_mode,omitempty"`
	Tools              []string        `json:"tools"`
	MCPServers         []MCPServer     `json:"mcp_servers"`
	SlashCommands      []string        `json:"slash_commands"`
	Agents             []string        `json:"agents"`
	APIKeySource       string          `json:"apiKeySource,omitempty"`
	ClaudeCodeVersion  string          `json:"claude_code_version,omitempty"`
	QwenCodeVersion    string          `json:"qwen_code_version,omitempty"`
	OutputStyle        string          `json:"output_style,omitempty"`
	Skills             []string        `json:"skills,omitempty"`
	Capabilities       json.RawMessage `json:"capabilities,omitempty"`
}

// MCPServer is one entry of system/init mcp_servers.
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// SystemStatus is system/status: Status is "compacting", "requesting" or
// null; the permission mode is set when the mode changed (permissionMode
// for Claude, permission_mode for Qwen).
type SystemStatus struct {
	Status             *string `json:"status"`
	PermissionMode     string  `json:"permissionMode,omitempty"`
	PermissionModeQwen string  `json:"permission_mode,omitempty"`
	SessionID          string  `json:"session_id"`
	UUID               string  `json:"uuid,omitempty"`
}

// Result subtypes. Success has IsError false; the others have it true.
const (
	ResultSuccess              = "success"
	ResultErrorDuringExecution = "error_during_execution"
	ResultErrorMaxTurns        = "error_max_turns"
)

// Result ends a prompt turn (one per user message). Claude Code lists
// error texts in Errors; Qwen Code puts {"message":…} in Error.
// DurationMS is the turn's wall time in milliseconds.
type Result struct {
	Subtype           string             `json:"subtype"`
	IsError           bool               `json:"is_error"`
	DurationMS        int64              `json:"duration_ms"`
	DurationAPIMS     int64              `json:"duration_api_ms"`
	NumTurns          int                `json:"num_turns"`
	Result            string             `json:"result,omitempty"`
	StopReason        *string            `json:"stop_reason"`
	SessionID         string             `json:"session_id"`
	UUID              string             `json:"uuid,omitempty"`
	TotalCostUSD      float64            `json:"total_cost_usd"`
	Usage             json.RawMessage    `json:"usage,omitempty"`
	PermissionDenials []PermissionDenial `json:"permission_denials"`
	Errors            []string           `json:"errors,omitempty"`
	Error             *ResultError       `json:"error,omitempty"`
}

// ResultError is the error member of a Qwen Code result.
type ResultError struct {
	Message string `json:"message"`
}

// PermissionDenial is one tool call refused during the turn.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// StreamEvent carries one Anthropic streaming event (message_start,
// content_block_delta, …) of a partial message (--include-partial-messages).
type StreamEvent struct {
	UUID            string          `json:"uuid,omitempty"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Event           json.RawMessage `json:"event"`

	built bool // Event was built by the Mapper: valid JSON on one line
}

// KeepAlive is {"type":"keep_alive"}; it carries nothing and is ignored.
type KeepAlive struct{}

// Unknown is a line whose type (or system subtype) this package does not
// know. Raw is the whole line; it is written back unchanged. Unknown is a
// value, never an error: hosts ignore unknown messages.
type Unknown struct {
	Type    string          `json:"-"`
	Subtype string          `json:"-"`
	Raw     json.RawMessage `json:"-"`
}

// MessageType implements Message.
func (*User) MessageType() string { return TypeUser }

// MessageType implements Message.
func (*Assistant) MessageType() string { return TypeAssistant }

// MessageType implements Message.
func (*SystemInit) MessageType() string { return TypeSystem }

// MessageType implements Message.
func (*SystemStatus) MessageType() string { return TypeSystem }

// MessageType implements Message.
func (*Result) MessageType() string { return TypeResult }

// MessageType implements Message.
func (*StreamEvent) MessageType() string { return TypeStreamEvent }

// MessageType implements Message.
func (*KeepAlive) MessageType() string { return TypeKeepAlive }

// MessageType implements Message.
func (u *Unknown) MessageType() string { return u.Type }

func (*SystemInit) fixedSubtype() string   { return "init" }
func (*SystemStatus) fixedSubtype() string { return "status" }
