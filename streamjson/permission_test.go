package streamjson_test

import (
	"encoding/json"
	"errors"
	"github.com/acpmux/acpmux/confirm/gate"
	"testing"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/streamjson"
)

var (
	onceReject = []acp.PermissionOption{{OptionID: "allow-once", Name: "Yes", Kind: acp.AllowOnce}, {OptionID: "reject", Name: "No", Kind: acp.RejectOnce}}
	withAlways = []acp.PermissionOption{{OptionID: "allow-once", Kind: acp.AllowOnce}, {OptionID: "always", Kind: acp.AllowAlways}, {OptionID: "reject", Kind: acp.RejectOnce}}
)

const touchInput = `{"command": "touch changed.txt", "description": "Stub asks to run: touch changed.txt"}`

func ask(id, toolUseID string, opts []acp.PermissionOption, oneOff bool) streamjson.PermissionAsk {
	return streamjson.PermissionAsk{RequestID: id, ToolCallID: toolUseID, Kind: "execute", Title: "touch changed.txt",
		RawInput: json.RawMessage(touchInput), Options: opts, OneOff: oneOff, Dialect: streamjson.DialectClaude}
}

// TestAnswerPermissionRealSDKAnswers resolves the control responses that
// the real Claude Agent SDK and a raw host sent to Claude Code and Qwen
// Code (testdata/captures) against the can_use_tool they answered.
func TestAnswerPermissionRealSDKAnswers(t *testing.T) {
	tests := []struct {
		file    string
		opts    []acp.PermissionOption
		want    string
		wantMsg string
		intr    bool
	}{
		{"sdk-allow.jsonl", onceReject, "allow-once", "", false},
		{"claude-allow.jsonl", withAlways, "allow-once", "", false},
		{"claude-allow_always.jsonl", withAlways, "always", "", false},
		{"claude-deny.jsonl", withAlways, "reject", "denied by sj_drive", false},
		{"sdk-deny.jsonl", onceReject, "reject", "denied by sdk_tap", false},
		{"sdk-deny-interrupt.jsonl", onceReject, "reject", "denied by sdk_tap", true},
		{"qwen-allow.jsonl", withAlways, "allow-once", "", false},
		{"qwen-deny.jsonl", withAlways, "reject", "denied by sj_drive", false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			// The SDK taps log lines out of order: collect, then match.
			var req *streamjson.ControlRequest
			var resp *streamjson.ControlResponse
			resps := map[string]*streamjson.ControlResponse{}
			for _, l := range readCapture(t, tt.file) {
				m, err := streamjson.Parse(l.Msg)
				if err != nil {
					t.Fatal(err)
				}
				if c, ok := m.(*streamjson.ControlRequest); ok && c.Request.Subtype() == streamjson.SubtypeCanUseTool {
					req = c
				}
				if c, ok := m.(*streamjson.ControlResponse); ok {
					resps[c.Response.RequestID] = c
				}
			}
			if req != nil {
				resp = resps[req.RequestID]
			}
			if req == nil || resp == nil {
				t.Fatal("no can_use_tool and answer in the capture")
			}
			cu := req.Request.(*streamjson.CanUseToolRequest)
			a := ask(req.RequestID, cu.ToolUseID, tt.opts, false)
			a.RawInput = cu.Input
			v, err := streamjson.AnswerPermission(a, resp.Response)
			if err != nil {
				t.Fatalf("AnswerPermission: %v", err)
			}
			if v.OptionID != tt.want || v.Message != tt.wantMsg || v.Interrupt != tt.intr {
				t.Errorf("got %+v, want option %q message %q interrupt %v", v, tt.want, tt.wantMsg, tt.intr)
			}
		})
	}
}

// TestAnswerPermissionFailsClosed: every answer that is not a clear allow
// or deny of what was asked is refused, never an approval.
func TestAnswerPermissionFailsClosed(t *testing.T) {
	ok := func(resp string) streamjson.ResponseBody {
		return streamjson.ResponseBody{Subtype: "success", RequestID: "r1", Response: json.RawMessage(resp)}
	}
	tests := []struct {
		name  string
		ask   streamjson.PermissionAsk
		body  streamjson.ResponseBody
		want  string // optionId, or "" for a refusal
		stale bool
	}{
		{"allow", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow"}`), "allow-once", false},
		{"allow with the same input reordered", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","updatedInput":{"description":"Stub asks to run: touch changed.txt","command":"touch changed.txt"}}`), "allow-once", false},
		{"allow with null updatedInput", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","updatedInput":null}`), "", true},
		{"modified input", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","updatedInput":{"command":"touch other.txt","description":"Stub asks to run: touch changed.txt"}}`), "", true},
		{"input with a member added", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","updatedInput":{"command":"touch changed.txt","description":"Stub asks to run: touch changed.txt","x":1}}`), "", true},
		{"input with a duplicate member", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","updatedInput":{"command":"touch changed.txt","command":"rm -rf /","description":"Stub asks to run: touch changed.txt"}}`), "", false},
		{"updatedPermissions without allow_always offered", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","updatedPermissions":[{"type":"addRules"}]}`), "allow-once", false},
		{"updatedPermissions with allow_always", ask("r1", "t1", withAlways, false), ok(`{"behavior":"allow","updatedPermissions":[{"type":"addRules"}]}`), "always", false},
		{"updatedPermissions on a one-off", ask("r1", "t1", withAlways, true), ok(`{"behavior":"allow","updatedPermissions":[{"type":"addRules"}]}`), "allow-once", false},
		{"empty updatedPermissions", ask("r1", "t1", withAlways, false), ok(`{"behavior":"allow","updatedPermissions":[]}`), "allow-once", false},
		{"updatedPermissions not an array", ask("r1", "t1", withAlways, false), ok(`{"behavior":"allow","updatedPermissions":{"type":"addRules"}}`), "", false},
		{"deny", ask("r1", "t1", onceReject, false), ok(`{"behavior":"deny","message":"no"}`), "reject", false},
		{"deny without a reject_once option", ask("r1", "t1", []acp.PermissionOption{{OptionID: "a", Kind: acp.AllowOnce}, {OptionID: "never", Kind: acp.RejectAlways}}, false), ok(`{"behavior":"deny"}`), "", false},
		{"allow without an allow_once option", ask("r1", "t1", []acp.PermissionOption{{OptionID: "always", Kind: acp.AllowAlways}, {OptionID: "reject", Kind: acp.RejectOnce}}, false), ok(`{"behavior":"allow"}`), "", false},
		{"error response", ask("r1", "t1", onceReject, false), streamjson.ResponseBody{Subtype: "error", RequestID: "r1", Error: json.RawMessage(`"Tool use aborted"`)}, "", false},
		{"error object", ask("r1", "t1", onceReject, false), streamjson.ResponseBody{Subtype: "error", RequestID: "r1", Error: json.RawMessage(`{"message":"x"}`)}, "", false},
		{"unknown subtype", ask("r1", "t1", onceReject, false), streamjson.ResponseBody{Subtype: "ok", RequestID: "r1", Response: json.RawMessage(`{"behavior":"allow"}`)}, "", false},
		{"other request id", ask("r1", "t1", onceReject, false), streamjson.ResponseBody{Subtype: "success", RequestID: "r2", Response: json.RawMessage(`{"behavior":"allow"}`)}, "", false},
		{"other toolUseID", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","toolUseID":"t2"}`), "", false},
		{"same toolUseID", ask("r1", "t1", onceReject, false), ok(`{"behavior":"allow","toolUseID":"t1"}`), "allow-once", false},
		{"no response", ask("r1", "t1", onceReject, false), ok(``), "", false},
		{"response not an object", ask("r1", "t1", onceReject, false), ok(`"allow"`), "", false},
		{"unknown behavior", ask("r1", "t1", onceReject, false), ok(`{"behavior":"ask"}`), "", false},
		{"no behavior", ask("r1", "t1", onceReject, false), ok(`{}`), "", false},
		{"duplicate behavior", ask("r1", "t1", onceReject, false), ok(`{"behavior":"deny","behavior":"allow"}`), "", false},
		{"behavior in another case", ask("r1", "t1", onceReject, false), ok(`{"behavior":"deny","Behavior":"allow"}`), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := streamjson.AnswerPermission(tt.ask, tt.body)
			if tt.want == "" {
				if err == nil || !errors.Is(err, streamjson.ErrRefused) || v.OptionID != "" {
					t.Fatalf("got %+v, %v; want a refusal", v, err)
				}
				if errors.Is(err, streamjson.ErrStaleApproval) != tt.stale {
					t.Errorf("stale = %v, want %v (%v)", !tt.stale, tt.stale, err)
				}
				return
			}
			if err != nil || v.OptionID != tt.want {
				t.Fatalf("got %+v, %v; want option %q", v, err, tt.want)
			}
		})
	}
}

// TestCanUseToolSuggestions: Claude gets a PermissionUpdate only when a
// persistent option is offered and the prompt is not a one-off; Qwen gets
// allow and deny suggestions carrying the warnings.
func TestCanUseToolSuggestions(t *testing.T) {
	tests := []struct {
		name string
		ask  streamjson.PermissionAsk
		want string
	}{
		{"claude once", ask("r", "t", onceReject, false), ``},
		{"claude always", ask("r", "t", withAlways, false), `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch changed.txt"}],"behavior":"allow","destination":"session"}]`},
		{"claude one-off", ask("r", "t", withAlways, true), ``},
		{"qwen", func() streamjson.PermissionAsk {
			a := ask("r", "t", onceReject, false)
			a.Dialect, a.Warnings = streamjson.DialectQwen, []string{"w1", "w2"}
			return a
		}(), `[{"type":"allow","label":"Yes","description":"w1\nw2"},{"type":"deny","label":"No","description":"w1\nw2"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cu := streamjson.CanUseTool(tt.ask).Request.(*streamjson.CanUseToolRequest)
			if got := string(cu.PermissionSuggestions); tt.want == "" && got != "" || tt.want != "" && !streamjson.JSONEqual([]byte(got), []byte(tt.want)) {
				t.Errorf("permission_suggestions\n got %s\nwant %s", got, tt.want)
			}
			if cu.SuppressAlwaysAllowRule != tt.ask.OneOff {
				t.Errorf("suppress_always_allow_rule = %v", cu.SuppressAlwaysAllowRule)
			}
			if string(cu.Input) != touchInput {
				t.Errorf("input %s is not the raw input byte for byte", cu.Input)
			}
		})
	}
}

// TestCanUseToolShapeMatchesRealCLI: the members acpmux writes in a
// can_use_tool are those the real CLI writes plus title, decision_reason
// and suppress_always_allow_rule (all in the Claude Agent SDK's type).
func TestCanUseToolShapeMatchesRealCLI(t *testing.T) {
	for _, tt := range []struct {
		file string
		d    streamjson.Dialect
	}{{"claude-allow.jsonl", streamjson.DialectClaude}, {"qwen-allow.jsonl", streamjson.DialectQwen}} {
		var real map[string]json.RawMessage
		for _, l := range readCapture(t, tt.file) {
			var env struct {
				Request map[string]json.RawMessage `json:"request"`
			}
			json.Unmarshal(l.Msg, &env)
			if string(env.Request["subtype"]) == `"can_use_tool"` {
				real = env.Request
			}
		}
		a := ask("r", "t", withAlways, true)
		a.Dialect, a.Warnings = tt.d, []string{"w"}
		b, err := streamjson.AppendMessage(nil, streamjson.CanUseTool(a))
		if err != nil {
			t.Fatal(err)
		}
		var ours struct {
			Request map[string]json.RawMessage `json:"request"`
		}
		json.Unmarshal(b, &ours)
		extra := map[string]bool{"title": true, "decision_reason": true, "suppress_always_allow_rule": true, "description": true}
		for k := range ours.Request {
			if _, ok := real[k]; !ok && !extra[k] {
				t.Errorf("%s: member %q is not in the real can_use_tool", tt.file, k)
			}
		}
		for _, k := range []string{"tool_name", "input", "tool_use_id"} {
			if _, ok := ours.Request[k]; !ok {
				t.Errorf("%s: member %q missing", tt.file, k)
			}
		}
	}
}

// TestStaleApprovalMessageIsTheGates: the copy of the fixed message is
// the gate's (streamjson must not import confirm/gate).
func TestStaleApprovalMessageIsTheGates(t *testing.T) {
	if streamjson.StaleApprovalMessage != gate.StaleApprovalMessage {
		t.Errorf("StaleApprovalMessage %q differs from the gate's %q", streamjson.StaleApprovalMessage, gate.StaleApprovalMessage)
	}
}

// TestConfirmationsInterruptAndWithdraw: an interrupt takes every pending
// request in order; a withdrawn request's late answer is unknown.
func TestConfirmationsInterruptAndWithdraw(t *testing.T) {
	c := streamjson.NewConfirmations()
	for _, id := range []string{"a", "b", "c"} {
		if _, err := c.Ask(ask(id, "t-"+id, onceReject, false)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Ask(ask("a", "t", onceReject, false)); err == nil {
		t.Error("a duplicate request_id was accepted")
	}
	if cr, ok := c.Withdraw("b"); !ok || cr.RequestID != "b" {
		t.Fatalf("Withdraw(b) = %v, %v", cr, ok)
	}
	if _, ok := c.Withdraw("b"); ok {
		t.Error("b withdrawn twice")
	}
	_, _, err := c.Answer(streamjson.ResponseBody{Subtype: "success", RequestID: "b", Response: json.RawMessage(`{"behavior":"allow"}`)})
	if !errors.Is(err, streamjson.ErrUnknownRequest) {
		t.Errorf("late answer: %v, want ErrUnknownRequest", err)
	}
	got := c.Interrupt()
	if len(got) != 2 || got[0].RequestID != "a" || got[1].RequestID != "c" || c.Len() != 0 {
		t.Errorf("Interrupt() = %+v, len after %d", got, c.Len())
	}
	if o := streamjson.CancelledOutcome(); o.Outcome.Outcome != acp.OutcomeCancelled {
		t.Errorf("CancelledOutcome = %+v", o)
	}
}
