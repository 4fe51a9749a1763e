package confirm

import (
	"encoding/json"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// resolvedNotice is the params of the _acpmux/permission_resolved
// notification (the bridge's MethodPermissionResolved; docs/decisions.md,
// "The resolved notice", and docs/protocol.md). OptionID is the optionId the
// agent received, absent when it received "cancelled" (or, for reason
// agent_cancelled, error -32800).
type resolvedNotice struct {
	SessionID  string       `json:"sessionId"`
	DecisionID string       `json:"decisionId"`
	ToolCallID string       `json:"toolCallId,omitempty"`
	Status     store.Status `json:"status"`
	OptionID   string       `json:"optionId,omitempty"`
	ResolvedBy string       `json:"resolvedBy,omitempty"`
	AnsweredBy string       `json:"answeredBy,omitempty"` // the person of the winning answer (docs/tokens.md)
	Reason     store.Reason `json:"reason"`
	At         time.Time    `json:"at"`
}

// Notice returns the params of the _acpmux/permission_resolved notification
// for d closed as res, encoded as JSON. For example:
//
//	{"sessionId":"sess_1","decisionId":"0b6f…","toolCallId":"call_1",
//	 "status":"answered","optionId":"allow-once","resolvedBy":"http",
//	 "reason":"answered","at":"2026-07-01T12:00:00Z"}
func Notice(d *Decision, res Resolution) json.RawMessage {
	opt := res.OptionID
	if res.Reason == store.ReasonAgentCancelled {
		opt = ""
	}
	b, err := json.Marshal(resolvedNotice{SessionID: d.SessionID(), DecisionID: d.ID(),
		ToolCallID: d.snap.ToolCall.ToolCallID, Status: res.Status, OptionID: opt,
		ResolvedBy: res.By, AnsweredBy: res.Person, Reason: res.Reason, At: res.At})
	if err != nil {
		panic("confirm: marshal notice: " + err.Error()) // plain fields: cannot fail
	}
	return b
}
