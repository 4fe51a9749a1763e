package confirm

import (
	"encoding/json"
	"time"
)

// MethodPermissionResolved is the acpmux extension notification (ACP
// "Extensibility": methods starting with "_") that the bridge sends to a host
// together with $/cancel_request when the host's copy of a decision is
// withdrawn. Hosts that do not know it ignore it, as ACP requires for
// unknown extension notifications.
const MethodPermissionResolved = "_acpmux/permission_resolved"

// ResolvedNotice is the params of MethodPermissionResolved (docs/decisions.md,
// "The resolved notice"). Outcome is exactly what the agent received.
type ResolvedNotice struct {
	SessionID  string          `json:"sessionId"`
	DecisionID string          `json:"decisionId"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Status     Status          `json:"status"`
	Reason     string          `json:"reason"`
	ResolvedBy string          `json:"resolvedBy,omitempty"`
	Outcome    json.RawMessage `json:"outcome"`
	At         time.Time       `json:"at"`
}

// Notice returns the params of the _acpmux/permission_resolved notification
// for d closed as res, encoded as JSON. For example:
//
//	{"sessionId":"sess_1","decisionId":"0b6f…","toolCallId":"call_1",
//	 "status":"answered","reason":"answered","resolvedBy":"http",
//	 "outcome":{"outcome":"selected","optionId":"allow-once"},
//	 "at":"2026-07-01T12:00:00Z"}
func Notice(d *Decision, res Resolution) json.RawMessage {
	var outcome struct {
		Outcome json.RawMessage `json:"outcome"`
	}
	_ = json.Unmarshal(buildResult(res.OptionID, ""), &outcome)
	b, err := json.Marshal(ResolvedNotice{SessionID: d.SessionID(), DecisionID: d.ID(),
		ToolCallID: d.snap.ToolCall.ToolCallID, Status: res.Status, Reason: res.Reason,
		ResolvedBy: res.By, Outcome: outcome.Outcome, At: res.At})
	if err != nil {
		panic("confirm: marshal notice: " + err.Error()) // plain fields: cannot fail
	}
	return b
}
