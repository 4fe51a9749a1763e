package confirm

import (
	"encoding/json"

	"github.com/acpmux/acpmux/acp"
)

// maxToolCalls bounds the tool-call states kept per session; the oldest is
// forgotten first. Finished tool calls (completed, failed) are dropped at once.
const maxToolCalls = 1024

// toolCalls holds the latest state of each tool call of one session, built
// from tool_call and tool_call_update session updates (ACP "Tool Calls").
// Guarded by Broker.mu.
type toolCalls struct {
	byID  map[string]acp.ToolCallUpdate
	order []string
}

// apply merges one session/update `update` object. A "tool_call" replaces
// the state; a "tool_call_update" sets the fields it carries (content and
// locations replace whole arrays, as the spec says). Other updates are
// ignored.
func (t *toolCalls) apply(update json.RawMessage) {
	var u struct {
		SessionUpdate string `json:"sessionUpdate"`
		acp.ToolCallUpdate
	}
	if json.Unmarshal(update, &u) != nil || u.ToolCallID == "" {
		return
	}
	if t.byID == nil {
		t.byID = make(map[string]acp.ToolCallUpdate)
	}
	switch u.SessionUpdate {
	case "tool_call":
		t.put(u.ToolCallUpdate)
	case "tool_call_update":
		t.put(merge(t.byID[u.ToolCallID], u.ToolCallUpdate))
	default:
		return
	}
	if s := u.Status; s != nil && (*s == "completed" || *s == "failed") {
		delete(t.byID, u.ToolCallID) // the order entry is dropped lazily
	}
}

func (t *toolCalls) put(tc acp.ToolCallUpdate) {
	if _, ok := t.byID[tc.ToolCallID]; !ok {
		t.order = append(t.order, tc.ToolCallID)
	}
	t.byID[tc.ToolCallID] = tc
	if len(t.order) > 2*maxToolCalls {
		t.compact()
	}
	for len(t.byID) > maxToolCalls {
		delete(t.byID, t.order[0])
		t.order = t.order[1:]
	}
}

// compact drops order entries of forgotten tool calls, keeping each live id
// once at its latest position.
func (t *toolCalls) compact() {
	seen := make(map[string]bool, len(t.byID))
	keep := make([]string, 0, len(t.byID))
	for i := len(t.order) - 1; i >= 0; i-- {
		id := t.order[i]
		if _, live := t.byID[id]; live && !seen[id] {
			seen[id] = true
			keep = append(keep, id)
		}
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	t.order = keep
}

// latest returns the known state of id merged with the fields of req, which
// win: the request is what the agent asks about now.
func (t *toolCalls) latest(req acp.ToolCallUpdate) acp.ToolCallUpdate {
	base, ok := t.byID[req.ToolCallID]
	if !ok {
		return req
	}
	return merge(base, req)
}

// merge returns base with every field that upd carries set from upd.
func merge(base, upd acp.ToolCallUpdate) acp.ToolCallUpdate {
	base.ToolCallID = upd.ToolCallID
	if upd.Title != nil {
		base.Title = upd.Title
	}
	if upd.Kind != nil {
		base.Kind = upd.Kind
	}
	if upd.Status != nil {
		base.Status = upd.Status
	}
	if upd.Content != nil {
		base.Content = upd.Content
	}
	if upd.Locations != nil {
		base.Locations = upd.Locations
	}
	if upd.RawInput != nil {
		base.RawInput = upd.RawInput
	}
	if upd.RawOutput != nil {
		base.RawOutput = upd.RawOutput
	}
	return base
}
