package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"github.com/acpmux/acpmux/confirm/gate"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var updateHook = flag.Bool("update-hook", false, "rewrite want.json in testdata/hook/*.txtar")

// TestHookGolden runs the recorded Claude Code payloads in
// testdata/hook: each archive has the flags (args), the hook input
// (input.json) and the expected stdout (want.json, empty for no output).
// Outputs are compared as JSON values. Run with -update-hook to rewrite.
// The project directory is /home/dev/app, as in the payloads.
func TestHookGolden(t *testing.T) {
	t.Setenv("CLAUDE_PROJECT_DIR", "/home/dev/app") // the cwd of the recorded payloads
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "hook", "*.txtar"))
	if err != nil || len(files) < 5 {
		t.Fatalf("want recorded hook payloads, found %d: %v", len(files), err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parts := map[string][]byte{}
			for _, af := range ar.Files {
				parts[af.Name] = af.Data
			}
			args := append([]string{"claude"}, strings.Fields(string(parts["args"]))...)
			var out, errb bytes.Buffer
			code := hookMain(args, stdio{bytes.NewReader(parts["input.json"]), &out, &errb})
			if code != 0 || errb.Len() > 0 {
				t.Fatalf("hook %v: exit %d, stderr %q", args, code, errb.String())
			}
			if *updateHook {
				for i := range ar.Files {
					if ar.Files[i].Name == "want.json" {
						ar.Files[i].Data = indentJSON(t, out.Bytes())
					}
				}
				if err := os.WriteFile(f, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !sameJSON(t, out.Bytes(), parts["want.json"]) {
				t.Errorf("hook %v\ngot:  %s\nwant: %s", args, out.Bytes(), parts["want.json"])
			}
			if out.Len() > 0 && bytes.Count(out.Bytes(), []byte("\n")) != 1 {
				t.Errorf("output is not one line of JSON: %q", out.String())
			}
		})
	}
}

func indentJSON(t *testing.T, b []byte) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sameJSON compares two JSON texts as values; two empty texts are equal.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("got invalid JSON %q: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("golden invalid JSON %q: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// TestDecideClaude checks the routing table of the hook for each class,
// mode and flag, and that the fixed messages are used verbatim.
func TestDecideClaude(t *testing.T) {
	bash := func(mode, command string) claudeHookInput {
		in, _ := json.Marshal(map[string]any{"command": command})
		return claudeHookInput{HookEventName: "PreToolUse", PermissionMode: mode, ToolName: "Bash", ToolInput: in}
	}
	tests := []struct {
		name          string
		in            claudeHookInput
		plan, strict  bool
		decision, why string // decision "" means no output
		project       string // $CLAUDE_PROJECT_DIR
	}{
		{"plan read-only", bash("plan", "ls -la"), false, false, "allow", gate.ReadOnlyAllowMessage, ""},
		{"plan write", bash("plan", "rm -rf x"), false, false, "deny", gate.WriteBlockMessage, ""},
		{"plan unknown", bash("plan", "make"), false, false, "ask", gate.UnknownWarning, ""},
		{"plan unparsable", bash("plan", "echo 'oops"), false, false, "ask", gate.UnknownWarning, ""},
		{"plan comment ending in backslash", bash("plan", "ls # x \\\ntouch f"), false, false, "deny", gate.DivergeBlockMessage, ""},
		{"plan heredoc joined delimiter", bash("plan", "cat <<EOF\nEO\\\nF\ntouch f\nEOF"), false, false, "deny", gate.DivergeBlockMessage, ""},
		{"default comment ending in backslash", bash("default", "ls # x \\\ntouch f"), false, false, "", "", ""},
		{"plan missing command", claudeHookInput{PermissionMode: "plan", ToolName: "Bash", ToolInput: json.RawMessage(`{}`)}, false, false, "ask", gate.UnknownWarning, ""},
		{"plan bad tool_input", claudeHookInput{PermissionMode: "plan", ToolName: "Bash", ToolInput: json.RawMessage(`"ls"`)}, false, false, "ask", gate.UnknownWarning, ""},
		{"plan exit", claudeHookInput{PermissionMode: "plan", ToolName: "ExitPlanMode"}, false, false, "ask", gate.ExitPlanModeMessage, ""},
		{"plan other tool", claudeHookInput{PermissionMode: "plan", ToolName: "Write"}, false, false, "", "", ""},
		// Edit tools carrying a read-only looking command are never
		// allowed: only tool_name Bash is classified.
		{"plan Edit with command", claudeHookInput{PermissionMode: "plan", ToolName: "Edit", ToolInput: json.RawMessage(`{"command":"ls","file_path":"/p/a.go","old_string":"a","new_string":"b"}`)}, false, false, "", "", ""},
		{"plan Write with command", claudeHookInput{PermissionMode: "plan", ToolName: "Write", ToolInput: json.RawMessage(`{"command":"ls","file_path":"/p/a.go","content":"x"}`)}, false, false, "", "", ""},
		{"plan MultiEdit with command", claudeHookInput{PermissionMode: "plan", ToolName: "MultiEdit", ToolInput: json.RawMessage(`{"command":"git status","file_path":"/p/a.go","edits":[]}`)}, false, false, "", "", ""},
		{"plan NotebookEdit with command", claudeHookInput{PermissionMode: "plan", ToolName: "NotebookEdit", ToolInput: json.RawMessage(`{"command":"ls","notebook_path":"/p/a.ipynb","new_source":"x"}`)}, false, false, "", "", ""},
		{"plan bash lower case", claudeHookInput{PermissionMode: "plan", ToolName: "bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}, false, false, "", "", ""},
		{"flag plan", bash("default", "git commit -m x"), true, false, "deny", gate.WriteBlockMessage, ""},
		{"default write", bash("default", "rm -rf x"), false, false, "", "", ""},
		{"default unknown", bash("default", "make"), false, false, "", "", ""},
		{"default exit", claudeHookInput{PermissionMode: "default", ToolName: "ExitPlanMode"}, false, false, "", "", ""},
		{"strict write", bash("default", "rm -rf x"), false, true, "ask", gate.StrictWriteMessage, ""},
		{"strict unknown", bash("acceptEdits", "make"), false, true, "ask", gate.StrictUnknownMessage, ""},
		{"strict read-only", bash("default", "cat go.mod"), false, true, "", "", ""},
		{"strict plan write", bash("plan", "rm x"), false, true, "deny", gate.WriteBlockMessage, ""},
		{"other event", claudeHookInput{HookEventName: "PostToolUse", PermissionMode: "plan", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}, false, false, "", "", ""},
		{"background read-only", claudeHookInput{PermissionMode: "plan", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls","run_in_background":true}`)}, false, false, "ask", gate.UnknownWarning, ""},
		{"git in project", withCwd(bash("plan", "git status"), "/p/app/"), false, false, "allow", gate.ReadOnlyAllowMessage, "/p/app"},
		{"git after cd", withCwd(bash("plan", "git status"), "/p/app/vendor/x"), false, false, "ask", gate.UnknownWarning, "/p/app"},
		{"ls after cd", withCwd(bash("plan", "ls"), "/p/app/vendor/x"), false, false, "allow", gate.ReadOnlyAllowMessage, "/p/app"},
		{"git, no project dir", withCwd(bash("plan", "git log"), "/elsewhere"), false, false, "allow", gate.ReadOnlyAllowMessage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := decideClaude(tt.in, tt.plan, tt.strict, tt.project)
			switch {
			case tt.decision == "" && d != nil:
				t.Errorf("got %+v, want no output", *d)
			case tt.decision != "" && d == nil:
				t.Errorf("got no output, want %s", tt.decision)
			case d != nil && (d.PermissionDecision != tt.decision || d.PermissionDecisionReason != tt.why || d.HookEventName != "PreToolUse"):
				t.Errorf("got %+v, want %s %q", *d, tt.decision, tt.why)
			}
		})
	}
}

func TestHookUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"help", []string{"--help"}, "", 0, "acpmux hook claude [--plan] [--strict]", ""},
		{"help short", []string{"-h"}, "", 0, "--strict", ""},
		{"no target", nil, "", 2, "", `want exactly one target, "claude"`},
		{"other target", []string{"codex"}, "", 2, "", `want exactly one target, "claude"`},
		{"bad flag", []string{"claude", "--nope"}, "", 2, "", "flag provided but not defined"},
		{"not json", []string{"claude"}, "tool_name=Bash", 2, "", "not Claude Code PreToolUse JSON"},
		{"empty input", []string{"claude", "--plan"}, "", 2, "", "not Claude Code PreToolUse JSON"},
		{"flags first", []string{"--plan", "claude"}, `{"tool_name":"Bash","tool_input":{"command":"ls"}}`, 0, `"allow"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"hook"}, tt.args...), stdio{strings.NewReader(tt.stdin), &out, &errb})
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Errorf("stdout %q does not contain %q", out.String(), tt.stdout)
			}
			if tt.stderr == "" && errb.Len() > 0 || !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("stderr %q, want %q", errb.String(), tt.stderr)
			}
			if tt.code == 2 && out.Len() > 0 {
				t.Errorf("usage error wrote to stdout: %q", out.String())
			}
		})
	}
}

// errReader fails every read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestHookReadError(t *testing.T) {
	var out, errb bytes.Buffer
	if code := hookMain([]string{"claude"}, stdio{errReader{}, &out, &errb}); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "read hook input: broken pipe") {
		t.Errorf("stderr %q", errb.String())
	}
}

func withCwd(in claudeHookInput, cwd string) claudeHookInput {
	in.Cwd = cwd
	return in
}
