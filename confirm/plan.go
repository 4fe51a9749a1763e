package confirm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"

	"github.com/acpmux/acpmux/acp"
)

// Prefixes of decidedBy names.
const (
	decidedByRulePrefix  = "rule:"
	decidedByHostPrefix  = "host:"
	decidedBySessionPref = "session:"
	decidedByAlwaysPref  = "always:"
)

// shellCommand returns the shell command of a tool call: rawInput.command
// (a string or an argv array, see commandOf), else, for kind "execute", the
// title (Gemini CLI sends no rawInput; its title is the command).
func shellCommand(tc acp.ToolCallUpdate) string {
	if c := commandOf(tc.RawInput); c != "" {
		return c
	}
	if tc.Kind != nil && *tc.Kind == "execute" && tc.Title != nil {
		return *tc.Title
	}
	return ""
}

// kindOf returns the tool kind of s, "other" when absent.
func kindOf(s *Snapshot) string {
	if s.ToolCall.Kind == nil || *s.ToolCall.Kind == "" {
		return "other"
	}
	return *s.ToolCall.Kind
}

// itemOf builds the policy item of s under mode.
func (b *Broker) itemOf(s *Snapshot, mode gate.Mode) policy.Item {
	it := policy.Item{Kind: kindOf(s), Command: s.Command, Title: s.Title, Mode: string(mode), Agent: b.opts.Agent, Paths: pathsOf(s.ToolCall),
		InputSHA256: sha256Hex([]byte(string(s.ToolCall.RawInput) + "\x00" + string(s.ToolCall.Content) + "\x00" + string(s.ToolCall.Locations)))}
	if s.Command != "" {
		it.Class = "unknown"
		if s.Classification != nil && s.Classification.Class != "" {
			it.Class = s.Classification.Class
			it.Diverges = s.Classification.Diverges
		}
	}
	return it
}

// pathsOf returns locations[].path and the paths of diff content.
func pathsOf(tc acp.ToolCallUpdate) []string {
	var out []string
	var locs []struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(tc.Locations, &locs) == nil {
		for _, l := range locs {
			if l.Path != "" {
				out = append(out, l.Path)
			}
		}
	}
	for _, c := range diffsOf(tc.Content) {
		out = append(out, c.Path)
	}
	return out
}

type diffBlock struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

func diffsOf(content json.RawMessage) []diffBlock {
	var blocks []diffBlock
	if json.Unmarshal(content, &blocks) != nil {
		return nil
	}
	out := blocks[:0]
	for _, c := range blocks {
		if c.Type == "diff" && c.Path != "" {
			out = append(out, c)
		}
	}
	return out
}

// dataSource reports whether s is a read, search, fetch, think or
// interactive item: its policy precheck allows or denies, never asks.
func dataSource(s *Snapshot) bool {
	switch kindOf(s) {
	case "read", "search", "fetch", "think":
		return true
	}
	return interactive(s.Request)
}

// interactive reports whether the request is an ask-the-user tool call:
// toolCall._meta.claudeCode.toolName or toolCall._meta.toolName is
// AskUserQuestion (Claude) or ask_user (Gemini, Qwen).
func interactive(params json.RawMessage) bool {
	meta := acp.MemberBytes(acp.MemberBytes(params, "toolCall"), "_meta")
	if meta == nil {
		return false
	}
	name := acp.MemberString(acp.MemberBytes(meta, "claudeCode"), "toolName")
	if name == "" {
		name = acp.MemberString(meta, "toolName")
	}
	switch name {
	case "AskUserQuestion", "ask_user", "ask_user_question":
		return true
	}
	return false
}

// routeSnapshot decides the route of a new decision's snapshot and applies
// it: for an exact one-off prompt the options are cut to allow_once and
// reject_once and the seed-001 warning goes first. It runs once, before the
// decision opens.
func (b *Broker) routeSnapshot(s *Snapshot, producer string) {
	b.loadAlways()
	b.g.mu.Lock()
	gs := b.gateSessionLocked(s.SessionID)
	g := &gate.Info{Mode: gs.mode, ModeRevision: gs.revision, PolicyRevision: b.g.policyRev, Agent: b.opts.Agent, Producer: producer}
	pol, tripped := b.g.policy, gs.breaker.tripped
	it := b.itemOf(s, gs.mode)
	g.Key = rememberKey(it)
	remembered, by := gs.remember[g.Key], decidedBySessionPref+g.Key
	always, hasAlways := b.g.always[g.Key]
	b.g.mu.Unlock()
	if remembered == "" && hasAlways && b.alwaysStillStored(always) { // scope.go
		remembered, by = always.Decision, decidedByAlwaysPref+always.DecisionID
	}
	v := pol.Evaluate(it)
	g.Policy = v.Decision
	g.Approval = v.Approval
	route(g, s, it, v, tripped, remembered, by)
	if b.opts.LockMode && g.Mode == gate.ModePlan && strings.EqualFold(kindOf(s), "switch_mode") && g.Route != gate.RouteDeny {
		// --lock-mode: no approval can leave plan mode, so none is asked for
		// (an allow would reach the agent while the gate stays in plan).
		g.Route, g.DecidedBy, g.Message = gate.RoutePlanBlock, gate.BuiltinModeLocked, gate.ModeLockedMessage
	}
	if s.ModeRevision == 0 {
		s.ModeRevision = g.ModeRevision
	}
	s.Gate = g
	if g.Route == gate.RouteOneOff {
		oneOff(s, it.Class)
	}
	if kindOf(s) == "switch_mode" && g.Route == gate.RouteAsk && g.Mode == gate.ModePlan {
		s.Warnings = append([]string{gate.ExitPlanModeMessage}, s.Warnings...)
	}
	s.DisplayedText = displayedText(s)
	s.DisplayedTextSHA256 = sha256Hex([]byte(s.DisplayedText))
}

// route is the routing table of docs/plan-mode.md, in order: policy deny
// beats everything; switch_mode always goes to a human; the circuit
// breaker; plan-mode edits (whatever command they carry); plan-mode
// commands that bash may read differently (refused); plan-mode shell
// routing; the data-source precheck; policy allow; a remembered verdict;
// ask.
func route(g *gate.Info, s *Snapshot, it policy.Item, v policy.Verdict, tripped bool, remembered policy.Decision, rememberedBy string) {
	rule := decidedByRulePrefix + v.Rule
	set := func(r gate.Route, by, msg string) { g.Route, g.DecidedBy, g.Message = r, by, msg }
	plan := g.Mode == gate.ModePlan
	switch {
	case v.Decision == policy.DecisionDeny:
		set(gate.RouteDeny, rule, gate.PolicyDenyMessage)
	case it.Kind == "switch_mode":
		set(gate.RouteAsk, gate.BuiltinSwitchMode, "")
	case tripped:
		set(gate.RouteDeny, gate.BuiltinBreaker, gate.BreakerMessage)
	case plan && (editKind(it.Kind) || hasDiff(s.ToolCall)):
		// Before the shell routing: an edit's command field (rawInput.command
		// or an execute title) is not what the edit does, so a read-only
		// looking one never lets it run.
		set(gate.RoutePlanBlock, gate.BuiltinPlanBlock, gate.EditBlockMessage)
	case plan && s.Command != "":
		r, builtin, msg := gate.PlanShell(it.Class, it.Diverges, v.Decision)
		if builtin == "" {
			builtin = rule
		}
		set(r, builtin, msg)
	case dataSource(s) && v.Decision == policy.DecisionAsk:
		set(gate.RouteDeny, rule, gate.PolicyDenyMessage)
		g.Downgraded = true
	case v.Decision == policy.DecisionAllow:
		set(gate.RouteAllow, rule, "")
	case plan && !dataSource(s) && remembered != policy.DecisionDeny:
		// Any other tool in plan mode (kind other, unknown or missing, an
		// MCP tool): an exact one-off, never a remembered or persistent grant.
		set(gate.RouteOneOff, gate.BuiltinPlanOneOff, "")
	case remembered == policy.DecisionAllow && !plan:
		set(gate.RouteAllow, rememberedBy, "")
	case remembered == policy.DecisionDeny:
		set(gate.RouteDeny, rememberedBy, gate.PolicyDenyMessage)
	case dataSource(s):
		set(gate.RouteAsk, gate.BuiltinDataSource, "")
	case v.Decision == policy.DecisionAsk:
		set(gate.RouteAsk, rule, "")
	default:
		set(gate.RouteAsk, gate.DecidedByDefaultAsk, "")
	}
}

// editKind reports whether kind (compared without case or surrounding
// space) changes files: edit, delete or move.
func editKind(kind string) bool {
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "edit", "delete", "move":
		return true
	}
	return false
}

// hasDiff reports whether the tool call carries diff content (a block of
// type "diff", compared without case): an edit, whatever kind the agent
// gave it. Content that is not an array of objects cannot be checked and
// counts as a diff.
func hasDiff(tc acp.ToolCallUpdate) bool {
	if tc.Content == nil || strings.TrimSpace(string(tc.Content)) == "null" {
		return false
	}
	var content []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(tc.Content, &content) != nil {
		return true
	}
	for _, c := range content {
		if strings.EqualFold(strings.TrimSpace(c.Type), "diff") {
			return true
		}
	}
	return false
}

// oneOff turns s into an exact one-off prompt: only allow_once and
// reject_once options stay (every persistent option is hidden), and the
// seed-001 warning is the first warning.
func oneOff(s *Snapshot, class string) {
	kept := make([]acp.PermissionOption, 0, len(s.Options))
	for _, o := range s.Options {
		if o.Kind == acp.AllowOnce || o.Kind == acp.RejectOnce {
			kept = append(kept, o)
		}
	}
	s.Options = kept
	w := gate.UnknownWarning
	if class == "read-only" {
		w = gate.ReadOnlyAskWarning
	}
	rest := make([]string, 0, len(s.Warnings))
	for _, x := range s.Warnings {
		if x != gate.WarningUnknownCommand {
			rest = append(rest, x)
		}
	}
	s.Warnings = append([]string{w}, rest...)
}

// route is the Route constant the gate chose for s; RouteAsk without a gate.
func (s *Snapshot) route() gate.Route {
	if s.Gate == nil {
		return gate.RouteAsk
	}
	return s.Gate.Route
}

// OneOff reports whether the decision is an exact one-off prompt: hosts are
// offered only Options() (allow_once and reject_once), must show the first
// warning first, and persistent scopes are refused.
func (d *Decision) OneOff() bool { return d.snap.Gate != nil && d.snap.Gate.Route == gate.RouteOneOff }

// firstAllowOnce returns the first offered allow_once option id, or "".
func firstAllowOnce(opts []acp.PermissionOption) string {
	for _, o := range opts {
		if o.Kind == acp.AllowOnce {
			return o.OptionID
		}
	}
	return ""
}

// decideByGate closes d at once when the gate decided it without a host:
// allow, deny, plan block, or an exact one-off prompt with no host to show
// it (the plan-safe refusal). It reports whether d needs no presentation.
func (b *Broker) decideByGate(d *Decision, hosts int) bool {
	g := d.snap.Gate
	if g == nil {
		return false
	}
	switch g.Route {
	case gate.RouteAllow:
		opt := firstAllowOnce(d.snap.Options)
		if opt == "" {
			return false // nothing to answer with but a persistent grant: ask the hosts
		}
		b.decide(d, transition{Status: store.StatusAnswered, Answer: &Answer{OptionID: opt}, By: g.DecidedBy, Reason: store.ReasonPolicyAllow}, msgOr(g.Message, opt))
	case gate.RouteDeny:
		reason := store.ReasonPolicyDeny
		if g.DecidedBy == gate.BuiltinBreaker {
			reason = store.ReasonBreaker
		}
		b.decide(d, transition{Status: store.StatusCancelled, By: g.DecidedBy, Reason: reason}, g.Message)
	case gate.RoutePlanBlock:
		b.decide(d, transition{Status: store.StatusCancelled, By: g.DecidedBy, Reason: store.ReasonPlanBlock}, g.Message)
	case gate.RouteOneOff:
		if hosts > 0 && firstAllowOnce(d.snap.Options) != "" {
			return false
		}
		t := transition{Status: store.StatusCancelled, Reason: store.ReasonNoEligibleHost}
		if b.opts.AutoApprove {
			t.By = autoApproveHost // refusing: gateMessage says why
		}
		b.decide(d, t, gateMessage(&d.snap, t))
	case gate.RouteAsk:
		opt := firstAllowOnce(d.snap.Options)
		if !b.opts.AutoApprove || opt == "" {
			return false
		}
		b.decide(d, transition{Status: store.StatusAnswered, Answer: &Answer{OptionID: opt}, By: autoApproveHost, Reason: store.ReasonAnswered}, "answered by --auto-approve allow_once: "+opt)
	default:
		return false
	}
	return true
}

// autoApproveHost is who answers a decision for Options.AutoApprove, in
// the journal and the API's resolvedBy.
const autoApproveHost = "acpmux:auto-approve"

func msgOr(msg, alt string) string {
	if msg != "" {
		return msg
	}
	return alt
}

// decide takes the claim of open decision d and commits t.
func (b *Broker) decide(d *Decision, t transition, detail string) {
	<-d.ready
	d.mu.Lock()
	if d.status.Closed() || d.claiming {
		d.mu.Unlock()
		return
	}
	d.claiming = true
	d.mu.Unlock()
	b.commit(d, t, detail, true)
}

// gateMessage returns the fixed message the agent and the journal get for
// d's snapshot s closed by t, or "".
func gateMessage(s *Snapshot, t transition) string {
	g := s.Gate
	if g == nil {
		return ""
	}
	switch t.Reason {
	case store.ReasonPolicyAllow, store.ReasonPolicyDeny, store.ReasonPlanBlock, store.ReasonBreaker:
		return g.Message
	case store.ReasonStale:
		if g.Route == gate.RouteOneOff || g.Mode == gate.ModePlan {
			return gate.StaleApprovalMessage
		}
	case store.ReasonNoEligibleHost, store.ReasonTimeout:
		if g.Route == gate.RouteOneOff && t.By == autoApproveHost {
			return gate.AutoApproveRefusedMessage
		}
		if g.Route == gate.RouteOneOff {
			return gate.NoApprovalMessage
		}
	}
	return ""
}

// gateResult builds the agent's result for s closed by t: buildResult plus,
// when the gate has a message, _meta.acpmux {message, decidedBy, route}.
func gateResult(s *Snapshot, t transition, optionID, text string) json.RawMessage {
	msg := gateMessage(s, t)
	if msg == "" {
		return buildResult(optionID, text)
	}
	resp := acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Outcome: acp.OutcomeCancelled}}
	if optionID != "" {
		resp.Outcome = acp.RequestPermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: optionID}
	}
	m := map[string]string{"message": msg, "route": string(s.Gate.Route), "decidedBy": decidedBy(s, t)}
	if text != "" {
		m["text"] = text
	}
	resp.Meta, _ = json.Marshal(map[string]any{"acpmux": m})
	out, err := json.Marshal(resp)
	if err != nil {
		panic("confirm: marshal result: " + err.Error()) // only strings: cannot fail
	}
	return out
}

// decidedBy names who decided s's outcome t: the rule or builtin for the
// gate's own decisions, host:ID for a host's answer, acpmux:REASON else.
func decidedBy(s *Snapshot, t transition) string {
	switch t.Reason {
	case store.ReasonPolicyAllow, store.ReasonPolicyDeny, store.ReasonPlanBlock, store.ReasonBreaker:
		if s.Gate != nil {
			return s.Gate.DecidedBy
		}
	case store.ReasonAnswered:
		return decidedByHostPrefix + t.By
	}
	return "acpmux:" + string(t.Reason)
}

// revalidateGate checks that an approval of d still matches the gate: the
// same mode and mode revision, and no current policy rule denies it.
// Arguments are checked as they change (argsChanged).
func (b *Broker) revalidateGate(d *Decision) error {
	g := d.snap.Gate
	if g == nil {
		return nil
	}
	b.g.mu.Lock()
	gs := b.gateSessionLocked(d.snap.SessionID)
	mode, rev, pol := gs.mode, gs.revision, b.g.policy
	b.g.mu.Unlock()
	if mode != g.Mode || rev != g.ModeRevision {
		return fmt.Errorf("gate mode is %s (revision %d); the request was asked under %s (revision %d)", mode, rev, g.Mode, g.ModeRevision)
	}
	if v := pol.Evaluate(b.itemOf(&d.snap, mode)); v.Decision == policy.DecisionDeny {
		return fmt.Errorf("policy rule %q now denies it", v.Rule)
	}
	b.mu.Lock()
	cwd := ""
	if s := b.sessions[d.snap.SessionID]; s != nil {
		cwd = s.cwd
	}
	b.mu.Unlock()
	if d.snap.Cwd != "" && cwd != "" && cwd != d.snap.Cwd {
		return fmt.Errorf("working directory is %q; the request was asked in %q", cwd, d.snap.Cwd)
	}
	return nil
}

// argsChanged fails closed, as stale, every open decision of sessionID for
// the tool call of update whose arguments (command, rawInput.cwd, or the
// whole rawInput when there is no command) differ from its snapshot.
func (b *Broker) argsChanged(sessionID string, update json.RawMessage) {
	var u acp.ToolCallUpdate
	if json.Unmarshal(update, &u) != nil || u.ToolCallID == "" {
		return
	}
	if emptyObject(u.RawInput) {
		u.RawInput = nil // "{}" or null: the agent sent no arguments
	}
	if u.RawInput == nil && u.Title == nil && u.Kind == nil {
		return
	}
	for _, d := range b.openDecisions(sessionID) {
		// d.snap is immutable from creation on: no need to wait for d.ready,
		// which would block the agent's read loop on the store.
		if d.snap.ToolCall.ToolCallID != u.ToolCallID {
			continue
		}
		merged := d.snap.ToolCall
		if u.RawInput != nil {
			merged.RawInput = u.RawInput
		}
		if u.Title != nil {
			merged.Title = u.Title
		}
		if u.Kind != nil {
			merged.Kind = u.Kind
		}
		if err := differ(&d.snap, merged); err != nil {
			b.close(d, store.StatusCancelled, store.ReasonStale, "stale: "+err.Error())
		}
	}
}

var errArgs = errors.New("the tool call's arguments changed while the prompt was open")

// differ reports how the tool call merged with an update differs from the
// snapshot's: its shell command (from rawInput, or the title an agent uses
// as its command), rawInput.cwd, or the whole rawInput when there is no
// command.
func differ(s *Snapshot, merged acp.ToolCallUpdate) error {
	if cmd := shellCommand(merged); cmd != s.Command {
		return fmt.Errorf("%w: command %q, asked for %q", errArgs, cmd, s.Command)
	}
	old, cur := acp.MemberString(s.ToolCall.RawInput, "cwd"), acp.MemberString(merged.RawInput, "cwd")
	if old != cur && cur != "" {
		return fmt.Errorf("%w: cwd %q, asked in %q", errArgs, cur, old)
	}
	if s.Command == "" && !jsonEqual(s.ToolCall.RawInput, merged.RawInput) && !emptyObject(merged.RawInput) {
		return errArgs
	}
	return nil
}

func emptyObject(raw json.RawMessage) bool {
	t := strings.TrimSpace(string(raw))
	return t == "{}" || t == "null"
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
