// Package upstream connects a teammate bridge to a lead bridge: the
// teammate's side of docs/teammates.md. [Client] is a [confirm.Presenter]
// on the teammate that offers each of its decisions to the lead's /acp
// WebSocket as an _acpmux/teammate/ask request, and hands the lead's
// answer to the teammate's own broker, which validates it. The wire types
// here are shared with the lead's side (package bridge).
package upstream

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
)

// Methods of the teammate protocol (docs/protocol.md), sent by a teammate
// to its lead over the lead's /acp WebSocket.
const (
	// MethodHello is the request that names the connection's teammate; it
	// must come before any ask. Params: [Hello]; result {}. A name held
	// by another connection is refused with -32600.
	MethodHello = "_acpmux/teammate/hello"
	// MethodAsk is the request that offers one decision of the teammate
	// to the lead. Params: [Ask]; result: [AskResult]. A -32800 error
	// means the teammate withdrew it.
	MethodAsk = "_acpmux/teammate/ask"
	// MethodWithdraw is the notification that the teammate's decision
	// closed without the lead's answer. Params: [Withdraw].
	MethodWithdraw = "_acpmux/teammate/withdraw"
	// MethodUpdate is the notification that carries one session/update of
	// the teammate's agent to the lead, which shows it to its hosts under
	// the session "teammate:NAME/SESSION". Params: [Update].
	MethodUpdate = "_acpmux/teammate/update"
	// MethodPrompt is the request a lead started with
	// --allow-teammate-prompts sends its teammate when one of its hosts
	// prompts the teammate's session. Params: [Prompt]; result: the
	// agent's session/prompt result, verbatim.
	MethodPrompt = "_acpmux/teammate/prompt"
	// MethodCancel is the notification a lead started with
	// --allow-teammate-prompts sends its teammate when one of its hosts
	// sends session/cancel for the teammate's session. Params: [Cancel].
	MethodCancel = "_acpmux/teammate/cancel"
)

// namePattern is what a teammate name may be.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CheckName reports whether name is a valid teammate name: 1 to 64 ASCII
// letters, digits, '.', '_' or '-', starting with a letter or digit.
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("teammate name %q: want 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit", name)
	}
	return nil
}

// SessionName is the session under which the lead lists decision of
// teammate name's ACP session sessionID: "teammate:NAME/SESSION".
func SessionName(name, sessionID string) string { return "teammate:" + name + "/" + sessionID }

// Hello is the params of MethodHello.
type Hello struct {
	Teammate string `json:"teammate"`
}

// Ask is the params of MethodAsk: callback-free details of one decision
// of the teammate, everything its hosts were shown. Options are the exact
// offered options; DisplayedTextSHA256 is the teammate's
// Snapshot.DisplayedTextSHA256, which the lead recomputes and checks.
// TimeoutMs is how long the teammate's decision still stays open.
type Ask struct {
	Teammate            string                  `json:"teammate"`
	SessionID           string                  `json:"sessionId"`
	DecisionID          string                  `json:"decisionId"`
	ToolCallID          string                  `json:"toolCallId,omitempty"`
	Title               string                  `json:"title"`
	Kind                string                  `json:"kind,omitempty"`
	Command             string                  `json:"command,omitempty"`
	Classification      *confirm.Classification `json:"classification,omitempty"`
	Warnings            []string                `json:"warnings"`
	Cwd                 string                  `json:"cwd"`
	Options             []acp.PermissionOption  `json:"options"`
	DisplayedTextSHA256 string                  `json:"displayedTextSha256"`
	TimeoutMs           int64                   `json:"timeoutMs"`
}

// AskResult is the result of MethodAsk: the lead's outcome, as in an ACP
// RequestPermissionResponse ("selected" with the optionId a lead host
// chose, or "cancelled" when the lead's decision failed closed), and the
// DisplayedTextSHA256 of the decision the lead showed.
type AskResult struct {
	Outcome             Outcome `json:"outcome"`
	DisplayedTextSHA256 string  `json:"displayedTextSha256"`
}

// Outcome is AskResult.Outcome.
type Outcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

// Withdraw is the params of MethodWithdraw.
type Withdraw struct {
	Teammate   string `json:"teammate"`
	SessionID  string `json:"sessionId"`
	DecisionID string `json:"decisionId"`
}

// AskOf returns the details of decision d offered by teammate name.
func AskOf(name string, d *confirm.Decision, timeoutMs int64) Ask {
	s := d.Snapshot()
	a := Ask{Teammate: name, SessionID: s.SessionID, DecisionID: d.ID(), ToolCallID: s.ToolCall.ToolCallID,
		Title: s.Title, Command: s.Command, Classification: s.Classification, Warnings: s.Warnings,
		Cwd: s.Cwd, Options: d.Options(), DisplayedTextSHA256: s.DisplayedTextSHA256, TimeoutMs: timeoutMs}
	if s.ToolCall.Kind != nil {
		a.Kind = string(*s.ToolCall.Kind)
	}
	if a.Warnings == nil {
		a.Warnings = []string{}
	}
	return a
}

// DecodeAsk strictly decodes the params of MethodAsk: unknown or
// duplicate members are refused (errors wrap acp.ErrInvalidParams).
func DecodeAsk(params json.RawMessage) (Ask, error) {
	var a Ask
	if _, err := acp.DecodeObject(params, []string{"teammate", "sessionId", "decisionId", "toolCallId", "title", "kind",
		"command", "classification", "warnings", "cwd", "options", "displayedTextSha256", "timeoutMs"}, false); err != nil {
		return a, err
	}
	if k := acp.DuplicateKey(params); k != "" {
		return a, fmt.Errorf("%w: duplicate member %q", acp.ErrInvalidParams, k)
	}
	if err := json.Unmarshal(params, &a); err != nil {
		return a, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	if a.SessionID == "" || a.DecisionID == "" || len(a.Options) == 0 || a.DisplayedTextSHA256 == "" {
		return a, fmt.Errorf("%w: sessionId, decisionId, options and displayedTextSha256 are required", acp.ErrInvalidParams)
	}
	return a, nil
}

// Update is the params of MethodUpdate: the update member of the agent's
// session/update, verbatim.
type Update struct {
	Teammate  string          `json:"teammate"`
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// Prompt is the params of MethodPrompt: the prompt member of the lead
// host's session/prompt, verbatim, for the teammate's session SessionID.
type Prompt struct {
	SessionID string          `json:"sessionId"`
	Prompt    json.RawMessage `json:"prompt"`
}

// Cancel is the params of MethodCancel.
type Cancel struct {
	SessionID string `json:"sessionId"`
}

// UpdateParams returns the params of MethodUpdate for update of session
// sid of teammate name, with update's bytes kept as they are.
func UpdateParams(name, sid string, update []byte) []byte {
	n, _ := json.Marshal(name)
	s, _ := json.Marshal(sid)
	return []byte(`{"teammate":` + string(n) + `,"sessionId":` + string(s) + `,"update":` + string(update) + `}`)
}
