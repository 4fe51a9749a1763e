package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/acpmux/acpmux/confirm/gate"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/acpmux/acpmux/classify"
)

func init() {
	register(command{
		name:    "hook",
		summary: "Claude Code PreToolUse hook: gate Bash with the classifier in plan mode",
		run:     hookMain,
	})
}

const hookUsage = `Usage:
  acpmux hook claude [--plan] [--strict]

A Claude Code PreToolUse hook. Reads the hook's JSON from stdin and prints
a decision as JSON on stdout, or nothing to leave the call to Claude Code.

In plan mode (permission_mode "plan" in the input, or --plan):
  Bash, read-only command   allow
  Bash, write command       deny, with the fixed plan-block message
  Bash, unknown command     ask, with the fixed one-off warning
  ExitPlanMode              ask: leaving plan mode needs a human
  any other tool            no output (Claude Code decides)

Outside plan mode there is no output, unless --strict: then Bash commands
classified write or unknown get "ask". A Bash call with
run_in_background is at least unknown (it leaves a process running), and
so is git run while the shell's directory (cwd) is not
$CLAUDE_PROJECT_DIR: an earlier call may have cd'd into another
repository, whose configuration can run programs.

Install in .claude/settings.json (see docs/hook.md):
  {"hooks": {"PreToolUse": [{"matcher": "Bash|ExitPlanMode",
    "hooks": [{"type": "command", "command": "acpmux hook claude"}]}]}}

Exit status: 0 with a decision or none; 2 if the input cannot be read or
is not JSON (Claude Code then blocks the call and shows the message), or
on a usage error.

Flags:
`

// claudeHookInput is the part of Claude Code's PreToolUse input the hook
// reads.
type claudeHookInput struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
}

// claudeBashInput is tool_input of the Bash tool.
type claudeBashInput struct {
	Command         string `json:"command"`
	RunInBackground bool   `json:"run_in_background"`
}

// claudeHookOutput is a PreToolUse decision.
type claudeHookOutput struct {
	HookSpecificOutput claudeDecision `json:"hookSpecificOutput"`
}

type claudeDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

func hookMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	plan := fs.Bool("plan", false, "treat every call as made in plan mode")
	strict := fs.Bool("strict", false, "outside plan mode, ask for Bash commands classified write or unknown")
	rest, err := parseFlagsAround(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(s.out, hookUsage)
		printFlags(s.out, fs)
		return 0
	}
	if err != nil {
		fmt.Fprintf(s.err, "acpmux hook: %v\nRun 'acpmux hook --help' for usage.\n", err)
		return 2
	}
	if len(rest) != 1 || rest[0] != "claude" {
		fmt.Fprintf(s.err, "acpmux hook: want exactly one target, \"claude\": acpmux hook claude [--plan] [--strict]\n")
		return 2
	}
	raw, err := io.ReadAll(s.in)
	if err != nil {
		fmt.Fprintf(s.err, "acpmux hook: read hook input: %v\n", err)
		return 2
	}
	var in claudeHookInput
	if err := json.Unmarshal(raw, &in); err != nil {
		fmt.Fprintf(s.err, "acpmux hook: hook input is not Claude Code PreToolUse JSON: %v\n", err)
		return 2
	}
	d := decideClaude(in, *plan, *strict, os.Getenv("CLAUDE_PROJECT_DIR"))
	if d == nil {
		return 0
	}
	enc := json.NewEncoder(s.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(claudeHookOutput{HookSpecificOutput: *d}); err != nil {
		fmt.Fprintf(s.err, "acpmux hook: write decision: %v\n", err)
		return 2
	}
	return 0
}

// decideClaude returns the hook's decision, or nil to leave the call to
// Claude Code. projectDir is $CLAUDE_PROJECT_DIR, or empty. See
// hookUsage and docs/hook.md.
func decideClaude(in claudeHookInput, plan, strict bool, projectDir string) *claudeDecision {
	if in.HookEventName != "" && in.HookEventName != "PreToolUse" {
		return nil
	}
	planMode := plan || in.PermissionMode == "plan"
	decide := func(decision, reason string) *claudeDecision {
		return &claudeDecision{HookEventName: "PreToolUse", PermissionDecision: decision, PermissionDecisionReason: reason}
	}
	switch in.ToolName {
	case "ExitPlanMode":
		if planMode {
			return decide("ask", gate.ExitPlanModeMessage)
		}
	case "Bash":
		class, diverges := bashClass(in.ToolInput, movedAway(in.Cwd, projectDir))
		switch {
		case planMode:
			// The gate's own plan-mode rows, without a policy: a block is
			// Claude Code's deny, a one-off prompt its ask.
			route, _, msg := gate.PlanShell(class.String(), diverges, "")
			switch route {
			case gate.RouteAllow:
				return decide("allow", msg)
			case gate.RoutePlanBlock:
				return decide("deny", msg)
			}
			return decide("ask", gate.UnknownWarning)
		case strict && class == classify.Write:
			return decide("ask", gate.StrictWriteMessage)
		case strict && class == classify.Unknown:
			return decide("ask", gate.StrictUnknownMessage)
		}
	}
	return nil
}

// bashClass classifies the command of a Bash tool call. Input without a
// command string is Unknown; a background run is at least Unknown; so is
// git when an earlier call moved the shell out of the project directory
// (moved): it would trust another repository's configuration, as
// "cd sub && git status" would in one command.
// diverges reports whether bash may read the command differently from
// the classifier (classify.Verdict.Diverges).
func bashClass(raw json.RawMessage, moved bool) (class classify.Class, diverges bool) {
	var b claudeBashInput
	if err := json.Unmarshal(raw, &b); err != nil {
		return classify.Unknown, false
	}
	v := classify.Command(b.Command)
	class = v.Class
	if b.RunInBackground || (moved && slices.Contains(v.Programs, "git")) {
		class = class.Max(classify.Unknown)
	}
	return class, v.Diverges
}

// movedAway reports whether the shell's directory cwd is not the project
// directory. Unknown directories count as not moved.
func movedAway(cwd, projectDir string) bool {
	if cwd == "" || projectDir == "" {
		return false
	}
	return filepath.Clean(cwd) != filepath.Clean(projectDir)
}
