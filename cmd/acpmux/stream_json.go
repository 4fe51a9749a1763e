package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/shell"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/streamjson"
)

func init() {
	register(command{name: "stream-json", summary: "drive an ACP agent from a stream-json script or SDK (Claude Agent SDK, Qwen Code SDK) on stdio", run: streamJSONMain,
		flags: func() *flag.FlagSet { fs, _ := sjFlagSet(); return fs }})
}

// sjFlagSet builds the flag set of "acpmux stream-json" (its own flags;
// the SDKs' flags are sorted out before it parses).
func sjFlagSet() (*flag.FlagSet, *sjFlags) {
	fs := flag.NewFlagSet("stream-json", flag.ContinueOnError)
	f := new(sjFlags)
	f.register(fs)
	registerConfigFlag(fs)
	return fs, f
}

const streamJSONUsage = `Usage: acpmux stream-json [flags] -- AGENT [ARGS...]

Starts AGENT (an ACP agent) behind the usual relay and speaks Claude Code's
stream-json protocol on stdin and stdout, so that scripts and agent SDKs
(the Claude Agent SDK, the Qwen Code SDK) drive any ACP agent with acpmux's
confirmations, warnings, plan-mode gate and policy. The agent command may
also come from $ACPMUX_AGENT (a shell-quoted command line) when no "--" is
given. Flags the SDKs pass to their CLI (--output-format, --verbose,
--permission-prompt-tool, --model, --session-id, ...) are accepted, as
--flag=value or --flag value, and ignored where they mean nothing here.

stdout carries only stream-json; logs and the agent's stderr go to stderr.
At stdin EOF the running turn is cancelled, the agent stopped, and acpmux
exits 0; if the agent exits first, acpmux exits with its status.
See docs/stream-json.md.

Flags:
`

// sjFlags are the flags of "acpmux stream-json": the relay's, and the
// stream-json ones.
type sjFlags struct {
	relayFlags
	dialect         string
	partial         bool
	prompts         string
	permissionMode  string
	model           string
	explicitGateSet bool
}

func (f *sjFlags) register(fs *flag.FlagSet) {
	f.relayFlags.register(fs)
	fs.StringVar(&f.dialect, "dialect", "", "stream-json dialect: claude or qwen (default: qwen when the Qwen Code SDK's flags are seen, else claude)")
	fs.BoolVar(&f.partial, "include-partial-messages", false, "also write each text and thinking chunk as a stream_event")
	fs.StringVar(&f.prompts, "permission-prompts", "", "none: deny every permission prompt this host would get at once (for runs that must never wait)")
	fs.StringVar(&f.permissionMode, "permission-mode", "", "permission mode to start in: plan engages the plan-mode gate; another mode the agent offers is selected with session/set_mode")
	fs.StringVar(&f.permissionMode, "approval-mode", "", "the Qwen Code SDK's name for --permission-mode")
	fs.StringVar(&f.model, "model", "", "model to select when the agent offers a model option (session/set_model or a model config option)")
}

// sdkValueFlags are the flags of the Claude Agent SDK and the Qwen Code SDK
// that take a value, so that "--flag value" consumes the value. They are
// accepted and ignored (see docs/stream-json.md, "Flags").
var sdkValueFlags = map[string]bool{
	"output-format": true, "input-format": true, "permission-prompt-tool": true, "max-turns": true,
	"max-budget-usd": true, "fallback-model": true, "allowedTools": true, "disallowedTools": true, "tools": true,
	"mcp-config": true, "setting-sources": true, "resume": true, "session-id": true, "add-dir": true, "agent": true,
	"betas": true, "json-schema": true, "effort": true, "thinking": true, "thinking-display": true,
	"max-thinking-tokens": true, "plugin-dir": true, "plugin-dir-no-mcp": true, "debug-file": true, "settings": true,
	"system-prompt": true, "append-system-prompt": true, "agents": true, "channel": true, "channels": true,
	"max-session-turns": true, "core-tools": true, "exclude-tools": true, "allowed-tools": true, "auth-type": true,
	"resume-session-at": true, "task-budget": true, "sdk-url": true, "managed-settings": true,
	"initialize-fields": true, "project-config-root": true, "session-mirror": true,
}

// qwenFlags are flags only the Qwen Code SDK passes: seeing one selects the
// Qwen dialect when --dialect is not given.
var qwenFlags = map[string]bool{"channel": true, "approval-mode": true, "max-session-turns": true, "core-tools": true, "exclude-tools": true, "allowed-tools": true, "auth-type": true}

// splitSDKArgs separates args (before "--") into the flags fs defines, to
// be parsed by it, and the SDK flags it does not define, which are
// returned by name (value "" for a bare flag). Parsing stops at the first
// argument that is not a flag: it and the rest are rest.
func splitSDKArgs(fs *flag.FlagSet, args []string) (known []string, sdk map[string]string, rest []string) {
	sdk = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			return known, sdk, args[i:]
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil || name == "h" || name == "help" {
			known = append(known, a)
			if f != nil && !hasVal && !isBoolFlag(f) && i+1 < len(args) {
				known = append(known, args[i+1])
				i++
			}
			continue
		}
		if !hasVal && sdkValueFlags[name] && i+1 < len(args) {
			val = args[i+1]
			i++
		}
		sdk[name] = val
	}
	return known, sdk, nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// agentArgv returns the agent command: argv after "--", else $ACPMUX_AGENT
// split as a shell would, else the positional arguments.
func agentArgv(argv, rest []string, dashDash bool) ([]string, error) {
	if dashDash {
		return argv, nil
	}
	if env := os.Getenv("ACPMUX_AGENT"); strings.TrimSpace(env) != "" {
		fields, err := shell.Fields(env, func(string) string { return "" })
		if err != nil {
			return nil, fmt.Errorf("ACPMUX_AGENT: %w", err)
		}
		return fields, nil
	}
	return rest, nil
}

func streamJSONMain(args []string, s stdio) int {
	fs, f := sjFlagSet()
	flagArgs, argv, dashDash := splitDashDash(args)
	known, sdk, rest := splitSDKArgs(fs, flagArgs)
	help := func(w io.Writer) {
		fmt.Fprint(w, streamJSONUsage)
		writeFlags(w, fs)
	}
	if done, code := parseArgs("stream-json", fs, s, help, func() error { return fs.Parse(known) }); done {
		return code
	}
	if _, _, err := applyConfig("stream-json", fs); err != nil {
		fmt.Fprintln(s.err, "acpmux stream-json:", err)
		return 2
	}
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "mode" {
			f.explicitGateSet = true
		}
	})
	argv, err := agentArgv(argv, rest, dashDash)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux stream-json:", err)
		return 2
	}
	if len(argv) == 0 {
		fmt.Fprintln(s.err, "acpmux stream-json: no agent command; usage: acpmux stream-json [flags] -- AGENT [ARGS...] (or set ACPMUX_AGENT)")
		return 2
	}
	dialect := streamjson.DialectClaude
	switch f.dialect {
	case "claude":
	case "qwen":
		dialect = streamjson.DialectQwen
	case "":
		for name := range sdk {
			if qwenFlags[name] {
				dialect = streamjson.DialectQwen
			}
		}
		fs.Visit(func(fl *flag.Flag) {
			if fl.Name == "approval-mode" {
				dialect = streamjson.DialectQwen
			}
		})
	default:
		fmt.Fprintf(s.err, "acpmux stream-json: --dialect %q: want claude or qwen\n", f.dialect)
		return 2
	}
	if strings.EqualFold(f.permissionMode, "plan") && !f.explicitGateSet {
		f.gate.mode = "plan"
	}
	log, closeLog, err := f.logger(s.err)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux stream-json:", err)
		return loggerStatus(err)
	}
	defer closeLog()
	for name, val := range sdk {
		log.Debug("stream-json: SDK flag accepted and ignored", "flag", name, "value", val)
	}
	if dashDash && len(rest) > 0 {
		log.Debug("stream-json: arguments before -- ignored", "args", rest)
	}
	for _, name := range []string{"input-format", "output-format"} {
		if v, ok := sdk[name]; ok && v != "stream-json" {
			log.Warn("stream-json: acpmux stream-json speaks only stream-json; flag ignored", "flag", name, "value", v)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := startRelay(&f.relayFlags, argv, s.err, log)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux stream-json:", err)
		var usage usageError
		switch {
		case errors.As(err, &usage):
			return 2
		case errors.Is(err, bridge.ErrAgentStart):
			return 127
		}
		return 1
	}
	cwd, _ := os.Getwd()
	t := newTranslator(translatorOptions{
		Dialect: dialect, Partial: f.partial, NoPrompts: strings.EqualFold(f.prompts, "none"),
		PermissionMode: f.permissionMode, Model: f.model, Cwd: cwd, MaxLineBytes: f.maxLineBytes,
		Grace: f.grace, PlanAtStart: f.gate.mode == "plan",
	}, r.broker, log, s.out)
	if err := r.bridge.AddHost(bridge.NewHost(sjHostID, t.hostConn(), bridge.HostOptions{Blocking: true, QueueLen: blockingQueueLen(f.queueLen), Kind: "stream-json"})); err != nil {
		fmt.Fprintln(s.err, "acpmux stream-json:", err)
		return 1
	}
	in, _ := pollableStdin(s.in)
	go t.run(in)
	code := r.run(ctx)
	return t.finish(code)
}
