package confirm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/hidden"

	"github.com/acpmux/acpmux/acp"
)

// Request is one session/request_permission of the agent, as the bridge
// hands it to Ask.
type Request struct {
	// SessionID is the ACP session id. When empty, the params' sessionId is
	// used; when both are set they must be equal.
	SessionID string
	// AgentKey is the unique key of the agent's request within this agent
	// process: the bridge passes its process epoch plus acp.IDKey of the
	// JSON-RPC id. The decision id is UUIDv5(SessionID, AgentKey). Required.
	AgentKey string
	// Params is the raw params of session/request_permission, never
	// re-encoded; the snapshot keeps these exact bytes.
	Params json.RawMessage
	// Cwd is the session's working directory as the bridge knows it.
	Cwd string
	// ModeRevision is the revision of the session's mode when the request
	// arrived; Options.Revalidate compares it with the current one.
	ModeRevision uint64
	// Timeout is how long the decision stays open: 0 means
	// Options.DefaultTimeout; a value below 0 or above MaxTimeout is an error
	// ([CheckTimeout]; never clamped).
	Timeout time.Duration
	// AllowFreeText lets an answer carry free text (Answer.Text). ACP v1
	// permission requests have no such field, so the bridge sets it only for
	// hosts that collect feedback (see docs/decisions.md).
	AllowFreeText bool
	// Producer is the id of the host that owns the session, recorded in
	// the audit row ([gate.PlanItem].Producer).
	Producer string
	// Requester is the person (docs/tokens.md) whose session/prompt
	// started the current prompt turn, "" when unknown; a rule with
	// requester_may_approve = false keeps them from answering.
	Requester string
	// Relayed, when not nil, is what another bridge (a teammate, see
	// docs/teammates.md) already derived and showed for its own decision:
	// the snapshot takes its title, command, classification and warnings
	// verbatim instead of deriving them, so every hop shows the same
	// warnings byte for byte.
	Relayed *Relayed
}

// Relayed is the displayed part of a decision of another bridge
// (Request.Relayed). DisplayedTextSHA256 is that bridge's
// Snapshot.DisplayedTextSHA256: Ask refuses the request (an error
// wrapping acp.ErrInvalidParams, no decision opened) when the snapshot it
// builds from these fields, the Cwd and the options hashes differently.
type Relayed struct {
	Title               string
	Command             string
	Classification      *Classification
	Warnings            []string
	DisplayedTextSHA256 string
}

// Timeout bounds of a decision (docs/decisions.md, "Timeouts").
const (
	DefaultTimeout = 5 * time.Minute // used when neither the request nor Options set one
	MaxTimeout     = 24 * time.Hour  // the longest a decision may stay open
)

// CheckTimeout reports whether t is a valid decision timeout: 0 (meaning the
// default) up to MaxTimeout inclusive; the error names t and the bounds. It
// validates the --decision-timeout flag as well as Request.Timeout.
func CheckTimeout(t time.Duration) error {
	if t < 0 || t > MaxTimeout {
		return fmt.Errorf("%w: %v is outside 0..%v", errInvalidTimeout, t, MaxTimeout)
	}
	return nil
}

// parseRequest validates the agent's params (ACP "Requesting Permission":
// at least one option, every optionId a unique non-empty string, every
// option with a name and a kind) and returns the session id, the toolCall
// and the options. Errors wrap acp.ErrInvalidParams (-32602). Duplicate or
// case-variant member names are refused so that acpmux and every host read
// the same options.
func parseRequest(req Request) (string, acp.ToolCallUpdate, []acp.PermissionOption, error) {
	var tc acp.ToolCallUpdate
	top, err := acp.DecodeObject(req.Params, []string{"sessionId", "toolCall", "options", "_meta"}, false)
	if err != nil {
		return "", tc, nil, fmt.Errorf("session/request_permission params: %w", err)
	}
	sid, err := parseSessionID(req.SessionID, top["sessionId"])
	if err != nil {
		return "", tc, nil, err
	}
	if raw, ok := top["toolCall"]; ok {
		if tc, err = parseToolCall(raw); err != nil {
			return "", tc, nil, err
		}
	}
	opts, err := parseOptions(top["options"])
	return sid, tc, opts, err
}

func parseSessionID(given string, raw json.RawMessage) (string, error) {
	if raw == nil {
		if given == "" {
			return "", fmt.Errorf("%w: sessionId is required", acp.ErrInvalidParams)
		}
		return given, nil
	}
	sid, err := acp.DecodeString(raw, "sessionId")
	if err != nil {
		return "", err
	}
	if given != "" && sid != given {
		return "", fmt.Errorf("%w: params sessionId %q is not the session %q", acp.ErrInvalidParams, sid, given)
	}
	return sid, nil
}

func parseToolCall(raw json.RawMessage) (acp.ToolCallUpdate, error) {
	var tc acp.ToolCallUpdate
	fields := []string{"toolCallId", "title", "kind", "status", "content", "locations", "rawInput", "rawOutput", "_meta"}
	if _, err := acp.DecodeObject(raw, fields, false); err != nil {
		return tc, fmt.Errorf("toolCall: %w", err)
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return tc, fmt.Errorf("%w: toolCall: %v", acp.ErrInvalidParams, err)
	}
	return tc, nil
}

func parseOptions(raw json.RawMessage) ([]acp.PermissionOption, error) {
	var items []json.RawMessage
	if raw == nil || json.Unmarshal(raw, &items) != nil || raw[0] != '[' {
		return nil, fmt.Errorf("%w: options must be an array", acp.ErrInvalidParams)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: at least one permission option is required", acp.ErrInvalidParams)
	}
	opts := make([]acp.PermissionOption, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		o, err := parseOption(it)
		if err != nil {
			return nil, fmt.Errorf("options[%d]: %w", i, err)
		}
		if seen[o.OptionID] {
			return nil, fmt.Errorf("%w: duplicate optionId %q", acp.ErrInvalidParams, o.OptionID)
		}
		seen[o.OptionID] = true
		opts = append(opts, o)
	}
	return opts, nil
}

func parseOption(raw json.RawMessage) (acp.PermissionOption, error) {
	var o acp.PermissionOption
	m, err := acp.DecodeObject(raw, []string{"optionId", "name", "kind", "_meta"}, false)
	if err != nil {
		return o, err
	}
	if o.OptionID, err = acp.DecodeString(m["optionId"], "optionId"); err != nil {
		return o, err
	}
	if o.OptionID == "" {
		return o, fmt.Errorf("%w: optionId must not be empty", acp.ErrInvalidParams)
	}
	if o.Name, err = acp.DecodeString(m["name"], "name"); err != nil {
		return o, err
	}
	kind, err := acp.DecodeString(m["kind"], "kind")
	if err != nil {
		return o, err
	}
	o.Kind = acp.PermissionOptionKind(kind)
	o.Meta = m["_meta"]
	return o, nil
}

// commandOf extracts the shell command a tool call runs from its rawInput:
// a "command" (or "cmd") member that is a string, or an array of strings
// joined with shell quoting (codex-acp sends ["bash","-lc","..."]). It
// returns "" when there is none.
func commandOf(rawInput json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(rawInput, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd"} {
		raw, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var argv []string
		if json.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
			return joinArgv(argv)
		}
		// Present but neither a string nor an argv of strings: the raw
		// JSON is the command, which no shell reads as read-only; never
		// fall back to the title.
		return string(raw)
	}
	return ""
}

// joinArgv renders argv as one POSIX shell command line.
func joinArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// classify runs fn on command, turning a panic into the "unknown" class so
// a classifier bug never yields a read-only verdict.
func classify(fn func(string) Classification, command string) (c *Classification, warn string) {
	if fn == nil || command == "" {
		return nil, ""
	}
	defer func() {
		if r := recover(); r != nil {
			c, warn = &Classification{Class: "unknown", Reasons: []string{fmt.Sprint("classifier panic: ", r)}}, gate.WarningClassifyFailed
		}
	}()
	cl := fn(command)
	c = &cl
	switch cl.Class {
	case "read-only":
	case "write":
		warn = gate.WarningWriteCommand
	default:
		warn = gate.WarningUnknownCommand
	}
	return c, warn
}

// displayedText is the canonical text of what a decision asks, one item per
// line, with every hidden character written as an escape ([hidden.Escape]). Its
// SHA-256 is Snapshot.DisplayedTextSHA256, so every host can prove it showed
// the same thing.
func displayedText(s *Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "title: %s\n", hidden.Escape(s.Title))
	if s.Command != "" {
		fmt.Fprintf(&b, "command: %s\n", hidden.Escape(s.Command))
	}
	fmt.Fprintf(&b, "cwd: %s\n", hidden.Escape(s.Cwd))
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", hidden.Escape(w))
	}
	for _, o := range s.Options {
		fmt.Fprintf(&b, "option: %s [%s] %s\n", hidden.Escape(o.OptionID), hidden.Escape(string(o.Kind)), hidden.Escape(o.Name))
	}
	return b.String()
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
