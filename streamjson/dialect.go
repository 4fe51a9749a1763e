package streamjson

// Dialect is the flavour of stream-json a script expects: the Claude Agent
// SDK's (Claude Code) or the Qwen Code SDK's. They differ in field casing
// (permissionMode against permission_mode), in the initialize response,
// in permission_suggestions and in how a result carries errors.
type Dialect string

// The dialects.
const (
	DialectClaude Dialect = "claude"
	DialectQwen   Dialect = "qwen"
)

// claudeToolNames and qwenToolNames name a tool call by its ACP kind when
// the agent gave no tool name, with the names of the CLI's own tools, so
// that a canUseTool callback written for that CLI recognises it.
var (
	claudeToolNames = map[string]string{"execute": "Bash", "edit": "Edit", "read": "Read", "search": "Grep", "fetch": "WebFetch"}
	qwenToolNames   = map[string]string{"execute": "run_shell_command", "edit": "edit", "read": "read_file", "search": "grep_search", "fetch": "web_fetch"}
)

// ToolName returns the tool name for a tool call without an explicit name:
// the dialect's name for the ACP tool kind (execute is "Bash" for Claude
// and "run_shell_command" for Qwen; edit, read, search and fetch likewise),
// else the kind itself, else "other".
func (d Dialect) ToolName(kind string) string {
	names := claudeToolNames
	if d == DialectQwen {
		names = qwenToolNames
	}
	if n, ok := names[kind]; ok {
		return n
	}
	if kind == "" {
		return "other"
	}
	return kind
}

// modeFields returns the permission mode in the dialect's member:
// (permissionMode, permission_mode).
func (d Dialect) modeFields(mode string) (string, string) {
	if d == DialectQwen {
		return "", mode
	}
	return mode, ""
}
