package streamjson

import "encoding/json"

// SessionInfo describes the ACP session behind a stream-json stream, for
// system/init and the initialize control response. Version is reported as
// claude_code_version or qwen_code_version. Empty lists are sent as [].
type SessionInfo struct {
	SessionID      string
	Cwd            string
	Model          string
	PermissionMode string
	Tools          []string
	Agents         []AgentInfo
	Models         []ModelInfo
	OutputStyle    string // "default" when empty
	APIKeySource   string // "none" when empty
	Version        string
}

// AgentInfo is one subagent of the initialize response.
type AgentInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ModelInfo is one model of the initialize response: Value is what
// set_model takes.
type ModelInfo struct {
	Value       string `json:"value"`
	DisplayName string `json:"displayName"`
	Description string `json:"description,omitempty"`
}

// Command is one slash command (from ACP available_commands_update).
type Command struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint"`
}

// ClaudeInitializeResponse is the response to a Claude Agent SDK
// initialize request: the members the SDK reads (supportedCommands(),
// supportedModels(), accountInfo(), …).
type ClaudeInitializeResponse struct {
	Commands              []Command   `json:"commands"`
	Agents                []AgentInfo `json:"agents"`
	OutputStyle           string      `json:"output_style"`
	AvailableOutputStyles []string    `json:"available_output_styles"`
	Models                []ModelInfo `json:"models"`
	Account               struct{}    `json:"account"`
	SessionID             string      `json:"session_id"`
	CurrentPermissionMode string      `json:"current_permission_mode,omitempty"`
	ClaudeCodeVersion     string      `json:"claude_code_version,omitempty"`
	Capabilities          []string    `json:"capabilities"`
}

// QwenInitializeResponse is the response to a Qwen Code SDK initialize
// request.
type QwenInitializeResponse struct {
	Subtype      string           `json:"subtype"` // "initialize"
	SessionID    string           `json:"session_id"`
	Capabilities QwenCapabilities `json:"capabilities"`
}

// QwenCapabilities are the capabilities of a Qwen initialize response.
type QwenCapabilities struct {
	CanHandleCanUseTool   bool `json:"can_handle_can_use_tool"`
	CanHandleHookCallback bool `json:"can_handle_hook_callback"`
	CanSetPermissionMode  bool `json:"can_set_permission_mode"`
	CanSetModel           bool `json:"can_set_model"`
	CanHandleMCPMessage   bool `json:"can_handle_mcp_message"`
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// initializeResponse returns the dialect's initialize response.
func initializeResponse(d Dialect, info SessionInfo, mode string, commands []Command) any {
	if d == DialectQwen {
		return QwenInitializeResponse{Subtype: SubtypeInitialize, SessionID: info.SessionID, Capabilities: QwenCapabilities{
			CanHandleCanUseTool: true, CanSetPermissionMode: true, CanSetModel: len(info.Models) > 0}}
	}
	style := orDefault(info.OutputStyle, "default")
	return ClaudeInitializeResponse{Commands: orEmpty(commands), Agents: orEmpty(info.Agents), OutputStyle: style,
		AvailableOutputStyles: []string{style}, Models: orEmpty(info.Models), SessionID: info.SessionID,
		CurrentPermissionMode: mode, ClaudeCodeVersion: info.Version, Capabilities: []string{}}
}

// initMessage returns system/init.
func initMessage(d Dialect, info SessionInfo, mode string, commands []Command, uuid string) *SystemInit {
	names := make([]string, 0, len(commands))
	for _, c := range commands {
		names = append(names, c.Name)
	}
	agents := make([]string, 0, len(info.Agents))
	for _, a := range info.Agents {
		agents = append(agents, a.Name)
	}
	m := &SystemInit{SessionID: info.SessionID, UUID: uuid, Cwd: info.Cwd, Model: info.Model, Tools: orEmpty(info.Tools),
		MCPServers: []MCPServer{}, SlashCommands: names, Agents: agents, APIKeySource: orDefault(info.APIKeySource, "none"),
		OutputStyle: orDefault(info.OutputStyle, "default")}
	m.PermissionMode, m.PermissionModeQwen = d.modeFields(mode)
	if d == DialectQwen {
		m.QwenCodeVersion, m.APIKeySource, m.OutputStyle = info.Version, "", ""
	} else {
		m.ClaudeCodeVersion, m.Capabilities = info.Version, json.RawMessage("[]")
	}
	return m
}
