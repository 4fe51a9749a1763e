package main

import (
	"flag"
	"reflect"
	"testing"
)

// TestStreamJSONAcceptsSDKFlags: the argv the Claude Agent SDK and the
// Qwen Code SDK pass to their CLI (both --flag=value and --flag value) is
// accepted; acpmux's own flags among them are parsed, the rest are
// collected by name, and nothing is left over as an agent command.
func TestStreamJSONAcceptsSDKFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args    []string
		partial bool
		mode    string
		sdk     map[string]string
	}{
		"claude": {args: []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
			"--permission-prompt-tool=stdio", "--disallowedTools=AskUserQuestion", "--tools=default",
			"--setting-sources=user,project,local", "--permission-mode=plan", "--allow-dangerously-skip-permissions",
			"--include-partial-messages", "--session-id=0b6f", "--replay-user-messages", "--max-turns", "3"},
			partial: true, mode: "plan",
			sdk: map[string]string{"output-format": "stream-json", "verbose": "", "input-format": "stream-json",
				"permission-prompt-tool": "stdio", "disallowedTools": "AskUserQuestion", "tools": "default",
				"setting-sources": "user,project,local", "allow-dangerously-skip-permissions": "", "session-id": "0b6f",
				"replay-user-messages": "", "max-turns": "3"}},
		"qwen": {args: []string{"--input-format", "stream-json", "--output-format", "stream-json", "--channel=SDK",
			"--model", "qwen3", "--approval-mode", "default", "--max-session-turns", "5", "--core-tools", "a,b",
			"--session-id", "123e4567-e89b-12d3-a456-426614174000"},
			mode: "default",
			sdk: map[string]string{"input-format": "stream-json", "output-format": "stream-json", "channel": "SDK",
				"max-session-turns": "5", "core-tools": "a,b", "session-id": "123e4567-e89b-12d3-a456-426614174000"}},
	} {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("stream-json", flag.ContinueOnError)
			var f sjFlags
			f.register(fs)
			known, sdk, rest := splitSDKArgs(fs, tc.args)
			if err := fs.Parse(known); err != nil {
				t.Fatalf("parse %q: %v", known, err)
			}
			if len(rest) != 0 || fs.NArg() != 0 {
				t.Errorf("left over: %q %q", rest, fs.Args())
			}
			if f.partial != tc.partial || f.permissionMode != tc.mode {
				t.Errorf("partial %v mode %q, want %v %q", f.partial, f.permissionMode, tc.partial, tc.mode)
			}
			if !reflect.DeepEqual(sdk, tc.sdk) {
				t.Errorf("SDK flags %v, want %v", sdk, tc.sdk)
			}
		})
	}
}

// TestStreamJSONAgentFromEnvironment: without "--" the agent command is
// $ACPMUX_AGENT split as a shell would split it; "--" wins over it.
func TestStreamJSONAgentFromEnvironment(t *testing.T) {
	t.Setenv("ACPMUX_AGENT", `node "/opt/my agent/cli.js" --acp`)
	got, err := agentArgv(nil, nil, false)
	if want := []string{"node", "/opt/my agent/cli.js", "--acp"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("agentArgv = %q, %v; want %q", got, err, want)
	}
	if got, _ := agentArgv([]string{"gemini", "--acp"}, nil, true); !reflect.DeepEqual(got, []string{"gemini", "--acp"}) {
		t.Errorf("with --: %q", got)
	}
	t.Setenv("ACPMUX_AGENT", `node "unterminated`)
	if _, err := agentArgv(nil, nil, false); err == nil {
		t.Error("an unterminated quote is not an error")
	}
}
