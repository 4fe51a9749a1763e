package confirm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acpmux/acpmux/confirm/gate"

	"github.com/acpmux/acpmux/confirm"
)

// otherReq is a permission request for a tool that is not a shell command
// (an MCP tool, kind other or none) with the given arguments.
func otherReq(sid, key, kind, title, rawInput string) confirm.Request {
	k := ""
	if kind != "" {
		k = fmt.Sprintf(`,"kind":%q`, kind)
	}
	p := fmt.Sprintf(`{"sessionId":%q,"toolCall":{"toolCallId":"call_%s","title":%q%s,"rawInput":%s},"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"allow-always","name":"Always","kind":"allow_always"},{"optionId":"reject-once","name":"No","kind":"reject_once"}]}`,
		sid, key, title, k, rawInput)
	return confirm.Request{SessionID: sid, AgentKey: key, Params: json.RawMessage(p), Cwd: "/work"}
}

// TestPlanModeOtherToolsAreExactOneOffs: in plan mode a tool that is not a
// shell command, not a data source and not an edit (kind other, missing,
// an MCP tool) is an exact one-off prompt: the persistent option is hidden,
// and a SESSION grant of one call never covers a call with other arguments.
func TestPlanModeOtherToolsAreExactOneOffs(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan})
	ide := newHost("ide")
	for i, kind := range []string{"other", ""} {
		ch := ask(b, otherReq("s", fmt.Sprint("k", i), kind, "mcp__db__query", `{"sql":"select 1"}`), ide)
		d := ide.wait(t)
		for _, o := range d.Options() {
			if o.OptionID == "allow-always" {
				t.Errorf("kind %q: the persistent option is offered in plan mode", kind)
			}
		}
		if _, _, err := b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-once", Scope: "SESSION"}); err == nil {
			t.Errorf("kind %q: a SESSION scope was accepted on a plan-mode one-off", kind)
		}
		b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-once"})
		await(t, ch)
	}
	// The same tool with other arguments asks again.
	ch := ask(b, otherReq("s", "k9", "other", "mcp__db__query", `{"sql":"DROP TABLE users"}`), ide)
	d := ide.wait(t)
	b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "reject-once"})
	if opt, _ := outcome(t, await(t, ch).result); opt != "reject-once" {
		t.Errorf("DROP TABLE: %s, want the host's reject", opt)
	}
}

// TestDefaultModeSessionGrantIsBoundToArguments: outside plan mode a
// SESSION grant for a call without a command is bound to its arguments.
func TestDefaultModeSessionGrantIsBoundToArguments(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd})
	ide := newHost("ide")
	ch := ask(b, otherReq("s", "a", "other", "mcp__db__query", `{"sql":"select 1"}`), ide)
	d := ide.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-once", Scope: "SESSION"}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	r := await(t, ask(b, otherReq("s", "b", "other", "mcp__db__query", `{"sql":"select 1"}`), ide))
	if opt, _ := outcome(t, r.result); opt != "allow-once" {
		t.Errorf("same arguments: %s, want the remembered allow", opt)
	}
	ch = ask(b, otherReq("s", "c", "other", "mcp__db__query", `{"sql":"DROP TABLE users"}`), ide)
	d = ide.wait(t) // shown again: the grant does not cover it
	b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "reject-once"})
	await(t, ch)
}

// TestPlanModeEditsByAnyName: an edit is blocked in plan mode whatever the
// case of its kind, and so is any tool call carrying a diff.
func TestPlanModeEditsByAnyName(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan})
	ide := newHost("ide")
	for i, tc := range []string{
		`{"toolCallId":"e1","title":"Edit","kind":"Edit"}`,
		`{"toolCallId":"e2","title":"Write file","kind":"other","content":[{"type":"diff","path":"/w/a","oldText":"a","newText":"b"}]}`,
	} {
		p := `{"sessionId":"s","toolCall":` + tc + `,"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"reject-once","name":"No","kind":"reject_once"}]}`
		r := await(t, ask(b, confirm.Request{SessionID: "s", AgentKey: fmt.Sprint("e", i), Params: json.RawMessage(p)}, ide))
		if opt, _ := outcome(t, r.result); opt != "reject-once" {
			t.Errorf("%s: %s, want blocked", tc, opt)
		}
	}
}

// TestUnreadableCommandIsNotTheTitle: a rawInput.command that is neither a
// string nor an argv of strings is never replaced by a harmless title.
func TestUnreadableCommandIsNotTheTitle(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan})
	ide := newHost("ide")
	ch := ask(b, otherReq("s", "x", "execute", "ls", `{"command":["touch",1]}`), ide)
	d := ide.wait(t) // not allowed as read-only "ls": it is asked
	if d.Snapshot().Command == "ls" {
		t.Errorf("command taken from the title")
	}
	b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "reject-once"})
	await(t, ch)
}

// TestTitleCommandChangeIsStale: for an agent whose title is the command
// (no rawInput), a changed title while the prompt is open fails closed.
func TestTitleCommandChangeIsStale(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan})
	ide := newHost("ide")
	p := `{"sessionId":"s","toolCall":{"toolCallId":"g1","title":"python3 a.py","kind":"execute"},"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"reject-once","name":"No","kind":"reject_once"}]}`
	ch := ask(b, confirm.Request{SessionID: "s", AgentKey: "g", Params: json.RawMessage(p)}, ide)
	d := ide.wait(t)
	b.ToolCallUpdate("s", json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"g1","title":"python3 evil.py"}`))
	b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-once"})
	if opt, _ := outcome(t, await(t, ch).result); opt == "allow-once" {
		t.Error("approved after the command in the title changed")
	}
}

// TestPlanModeEditWithReadOnlyCommandIsBlocked: in plan mode a tool call of
// kind edit, delete or move (any case) or one carrying diff content is
// blocked even when its command field (rawInput.command, or the title of an
// execute call) is read-only, with no rule, with an allow rule for
// read-only commands, and with an allow rule naming the command. No host is
// shown it; the audit row says builtin:plan-block.
func TestPlanModeEditWithReadOnlyCommandIsBlocked(t *testing.T) {
	diff := `,"content":[{"type":"diff","path":"/work/a.go","oldText":"a","newText":"b"}]`
	calls := []struct {
		name, toolCall string
	}{
		{"edit", `"kind":"edit","title":"ls","rawInput":{"command":"ls","file_path":"/work/a.go"}`},
		{"Edit", `"kind":"Edit","title":"ls","rawInput":{"command":"ls"}`},
		{"DELETE", `"kind":"DELETE","title":"git status","rawInput":{"command":"git status","path":"/work/a.go"}`},
		{"Move", `"kind":"Move","title":"ls","rawInput":{"command":["ls","-la"]}`},
		{"spaced kind", `"kind":" edit ","title":"ls","rawInput":{"command":"ls"}`},
		{"execute with diff", `"kind":"execute","title":"cat a.go","rawInput":{"command":"cat a.go"}` + diff},
		{"execute title with diff", `"kind":"execute","title":"ls"` + diff},
		{"read with diff", `"kind":"read","title":"ls","rawInput":{"command":"ls"}` + diff},
		{"Diff type", `"kind":"other","title":"ls","rawInput":{"command":"ls"},"content":[{"type":"Diff","path":"/work/a.go","newText":"b"}]`},
		{"unreadable content", `"kind":"execute","title":"ls","rawInput":{"command":"ls"},"content":{"type":"diff","path":"/work/a.go","newText":"b"}`},
	}
	policies := map[string]string{
		"no rule":          "",
		"allow read-only":  "[[rule]]\nname='ro'\ndecision='allow'\nclass='read-only'",
		"allow command":    "[[rule]]\nname='ls'\ndecision='allow'\ncommand=['ls*','git status','cat *']",
		"allow edit kinds": "[[rule]]\nname='edits'\ndecision='allow'\nkind=['edit','execute','read','other']",
	}
	for pname, src := range policies {
		for _, c := range calls {
			t.Run(pname+"/"+c.name, func(t *testing.T) {
				opts := confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan}
				if src != "" {
					opts.Policy = mustPolicy(t, src)
				}
				b := newBroker(t, opts)
				ide := newHost("ide")
				p := `{"sessionId":"s","toolCall":{"toolCallId":"e1",` + c.toolCall + `},"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"reject-once","name":"No","kind":"reject_once"}]}`
				r := await(t, ask(b, confirm.Request{SessionID: "s", AgentKey: "e", Params: json.RawMessage(p), Cwd: "/work"}, ide))
				if opt, msg := outcome(t, r.result); opt != "reject-once" || msg != gate.EditBlockMessage {
					t.Errorf("agent got %s %q, want reject-once with the edit-block message", opt, msg)
				}
				select {
				case d := <-ide.presented:
					t.Errorf("a host was asked: %s", d.Snapshot().Title)
				default:
				}
				if it := planItem(t, b, "s", confirm.DecisionID("s", "e")); it.DecidedBy != gate.BuiltinPlanBlock || it.Route != gate.RoutePlanBlock {
					t.Errorf("audit row decidedBy %q route %q, want %s %s", it.DecidedBy, it.Route, gate.BuiltinPlanBlock, gate.RoutePlanBlock)
				}
			})
		}
	}
}

// TestPlanModeRefusesDivergentCommands: in plan mode a shell command
// that bash may read differently from the classifier (a comment ending
// in a backslash, a here-document delimiter joined by a backslash-newline)
// is refused at once with the fixed message, no host is asked, and no
// allow rule (for its class, its text or any command) lets it run.
func TestPlanModeRefusesDivergentCommands(t *testing.T) {
	for _, policy := range []string{"", "[[rule]]\nname = 'any'\ndecision = 'allow'\nclass = 'unknown'\ncommand = '*'\n",
		"[[rule]]\nname = 'ro'\ndecision = 'allow'\nclass = 'read-only'\ncommand = 'ls*'\n"} {
		for i, cmd := range []string{"ls # x \\\ntouch f", "cat <<EOF\nEO\\\nF\ntouch f\nEOF", "ls\rtouch f"} {
			opts := confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan}
			if policy != "" {
				opts.Policy = mustPolicy(t, policy)
			}
			b := newBroker(t, opts)
			ide := newHost("ide")
			ch := ask(b, toolReq("s", fmt.Sprint("k", i), "execute", cmd), ide)
			opt, msg := outcome(t, await(t, ch).result)
			if opt != "reject-once" || msg != gate.DivergeBlockMessage {
				t.Errorf("policy %q, %q: got %s %q, want reject-once with the divergence message", policy, cmd, opt, msg)
			}
			if len(ide.presented) > 0 {
				t.Errorf("policy %q, %q: a host was asked", policy, cmd)
			}
		}
	}
}
