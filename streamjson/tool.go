package streamjson

import (
	"encoding/json"
	"strings"
)

// toolCall merges a tool_call or tool_call_update into the tool's state.
func (m *Mapper) toolCall(u acpUpdate, raw json.RawMessage) []Message {
	t := m.tools[u.ToolCallID]
	if t == nil {
		t = &tool{}
		m.tools[u.ToolCallID] = t
	}
	if n := toolNameOf(raw); n != "" {
		t.name = n
	}
	if u.Title != nil {
		t.title = *u.Title
	}
	if u.Kind != nil {
		t.kind = *u.Kind
	}
	if len(u.RawInput) > 0 && !t.shown {
		t.input = append(json.RawMessage(nil), u.RawInput...)
	}
	if len(u.RawOutput) > 0 {
		t.output = append(json.RawMessage(nil), u.RawOutput...)
	}
	if len(u.Content) > 0 {
		t.content = append(json.RawMessage(nil), u.Content...)
	}
	status := ""
	if u.Status != nil {
		status = *u.Status
	}
	var out []Message
	if !t.shown && (hasInput(t.input) || status == "in_progress" || status == "completed" || status == "failed") {
		out = m.showTool(out, u.ToolCallID, t)
	}
	if (status == "completed" || status == "failed") && !t.done {
		t.done = true
		out = m.flush(out)
		isErr := status == "failed"
		out = append(out, &User{Message: UserMessage{Role: "user", Content: Content{Blocks: []ContentBlock{
			ToolResultBlock(u.ToolCallID, toolText(t), isErr)}}}, SessionID: m.opt.Session.SessionID, UUID: m.opt.NewID()})
		m.newTurn = true
	}
	return out
}

func hasInput(in json.RawMessage) bool {
	if len(in) == 0 || string(in) == "null" {
		return false
	}
	var obj map[string]json.RawMessage
	return json.Unmarshal(in, &obj) != nil || len(obj) > 0
}

// showTool emits the tool_use block of a tool call.
func (m *Mapper) showTool(out []Message, id string, t *tool) []Message {
	t.shown = true
	out = m.flush(out)
	m.startMessage()
	name := t.name
	if name == "" {
		name = m.opt.Dialect.ToolName(t.kind)
	}
	in := t.input
	if len(in) == 0 || string(in) == "null" {
		in = json.RawMessage("{}")
	}
	return m.assistant(out, "msg_"+m.opt.NewID(), ContentBlock{Type: BlockToolUse, ID: id, Name: name, Input: in}, true)
}

// toolText is the text of a tool result: the text of its content, else its
// raw output (a string as is, anything else as JSON).
func toolText(t *tool) string {
	var items []struct {
		Type    string `json:"type"`
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Path string `json:"path"`
	}
	var parts []string
	if json.Unmarshal(t.content, &items) == nil {
		for _, it := range items {
			switch {
			case it.Type == "content" && it.Content.Type == "text":
				parts = append(parts, it.Content.Text)
			case it.Type == "diff":
				parts = append(parts, "edited "+it.Path)
			}
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n")
	}
	var s string
	if json.Unmarshal(t.output, &s) == nil {
		return s
	}
	return string(t.output)
}

// Permission returns what the script must see before the can_use_tool
// request of a: the tool_use block of its tool call when not yet shown
// (agents may ask before any tool_call notification, or with empty input).
func (m *Mapper) Permission(a PermissionAsk) []Message {
	t := m.tools[a.ToolCallID]
	if t == nil {
		t = &tool{name: a.ToolName, kind: a.Kind, title: a.Title}
		m.tools[a.ToolCallID] = t
	}
	if t.shown {
		return nil
	}
	if t.name == "" {
		t.name = a.toolName()
	}
	t.input = a.input()
	return m.showTool(nil, a.ToolCallID, t)
}

// Denied records a refused permission request for the result's
// permission_denials.
func (m *Mapper) Denied(a PermissionAsk) {
	m.denials = append(m.denials, PermissionDenial{ToolName: a.toolName(), ToolUseID: a.ToolCallID, ToolInput: a.input()})
}

// Cancelled records a permission request that was still pending when the
// turn was cancelled (the script's interrupt, stdin EOF). The Claude
// dialect lists it in the result's permission_denials, as Claude Code
// does for a prompt the user interrupted; the Qwen dialect does not, as
// Qwen Code does not (docs/stream-json.md).
func (m *Mapper) Cancelled(a PermissionAsk) {
	if m.opt.Dialect != DialectQwen {
		m.Denied(a)
	}
}
