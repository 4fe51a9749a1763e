package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/gate"
)

// Methods and notifications of mode tracking (ACP "Session Modes" and
// "Session Config Options"; docs/plan-mode.md).
const (
	// MethodSessionSetConfigOption is session/set_config_option; with
	// configId "mode" it selects a mode like session/set_mode.
	MethodSessionSetConfigOption = "session/set_config_option"
	// MethodTurnCancelled is acpmux's notification telling every host of a
	// session that acpmux cancelled the prompt turn (the circuit breaker):
	// params {"sessionId", "reason"}.
	MethodTurnCancelled = "_acpmux/turn_cancelled"
)

// IsPlanMode reports whether modeID is an agent's plan mode: "plan"
// (Claude Code, Gemini CLI, Qwen Code), in any letter case.
func IsPlanMode(modeID string) bool { return strings.EqualFold(modeID, "plan") }

// trackHostMode reports mode selections and prompts of host h to the
// broker's plan-mode gate. The request itself is relayed unchanged, except
// a mode selection that would take the agent out of its plan mode while
// --lock-mode holds the gate in plan mode: that one is refused with an
// error wrapping [acp.ErrForbidden] and must not reach the agent
// (docs/plan-mode.md).
func (b *Bridge) trackHostMode(h *Host, method string, params []byte) error {
	if err := unambiguousModeParams(method, params); err != nil {
		b.log.Warn("mode selection refused: ambiguous params", "host", h.ID, "method", method, "err", err)
		return err
	}
	if b.broker == nil {
		return nil
	}
	sid := acp.MemberString(params, "sessionId")
	modeID := ""
	switch method {
	case acp.MethodSessionSetMode:
		modeID = acp.MemberString(params, "modeId")
	case MethodSessionSetConfigOption:
		if !b.isModeConfig(sid, acp.MemberString(params, "configId")) {
			return nil
		}
		modeID = acp.MemberString(params, "value")
	case acp.MethodSessionPrompt:
		b.turns.set(sid, h.personName())
		if h.person != nil {
			b.log.Info("prompt from a person", "session", sid, "host", h.ID, "person", h.person.Name, "role", h.person.Role)
		}
		b.broker.PromptStarted(sid)
		return nil
	default:
		return nil
	}
	if err := b.hostSetMode(h, sid, modeID); err != nil {
		return err
	}
	b.agentModeIs(sid, modeID) // the request goes to the agent
	return nil
}

// Known params members of a mode selection: a case variant of one of them
// is refused (unambiguousModeParams).
var (
	setModeMembers         = []string{"sessionId", "modeId"}
	setConfigOptionMembers = []string{"sessionId", "configId", "value"}
)

// unambiguousModeParams returns an error wrapping [acp.ErrInvalidParams]
// (-32602) when the params of a session/set_mode or
// session/set_config_option request could be read two ways: not one JSON
// object, a member name twice at any depth, two names that differ only in
// letter case, or a case variant of a known member ("MODEID" for
// "modeId"). Peers disagree on which duplicate counts (acpmux's scanner
// reads the first, Go and JavaScript agents the last), so such a request
// is refused before it is read or forwarded (docs/plan-mode.md). Other
// methods return nil.
func unambiguousModeParams(method string, params []byte) error {
	known := setModeMembers
	switch method {
	case acp.MethodSessionSetMode:
	case MethodSessionSetConfigOption:
		known = setConfigOptionMembers
	default:
		return nil
	}
	if _, err := acp.DecodeObject(params, known, false); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if dup := acp.DuplicateKey(params); dup != "" {
		return fmt.Errorf("%s: %w: duplicate member %q", method, acp.ErrInvalidParams, dup)
	}
	return nil
}

// isModeConfig reports whether configID selects the agent's mode in session
// sid: "mode" in any letter case, or the id of a config option the agent
// advertised with category "mode" (ACP "Session Config Options").
func (b *Bridge) isModeConfig(sid, configID string) bool {
	if strings.EqualFold(configID, "mode") {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[sid]; s != nil {
		for _, id := range s.modes.modeConfigs {
			if id == configID {
				return true
			}
		}
	}
	return false
}

// modeConfigIDs returns the ids of the config options in raw (a
// configOptions array) that select a mode: id "mode" in any letter case, or
// category "mode".
func modeConfigIDs(raw []byte) []string {
	var opts []struct {
		ID       string `json:"id"`
		Category string `json:"category"`
	}
	if json.Unmarshal(raw, &opts) != nil {
		return nil
	}
	var ids []string
	for _, o := range opts {
		if isModeOption(o.ID, o.Category) {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// isModeOption reports whether a config option with this id and category
// selects a mode.
func isModeOption(id, category string) bool {
	return strings.EqualFold(id, "mode") || strings.EqualFold(category, "mode")
}

// trackAgentMode reports the agent's current_mode_update and
// config_option_update ("mode") session updates.
func (b *Bridge) trackAgentMode(sid string, update []byte) {
	if b.broker == nil {
		return
	}
	switch acp.MemberString(update, "sessionUpdate") {
	case "current_mode_update":
		m := acp.MemberString(update, "currentModeId")
		b.agentModeIs(sid, m)
		b.agentMode(sid, m)
	case "config_option_update":
		b.addModeConfigs(sid, modeConfigIDs(acp.MemberBytes(update, "configOptions")))
		if v := modeOption(acp.MemberBytes(update, "configOptions")); v != "" {
			b.agentModeIs(sid, v)
			b.agentMode(sid, v)
		}
	}
}

// trackSessionModes reports the mode of a new session from its result
// (modes.currentModeId, or the "mode" config option).
func (b *Bridge) trackSessionModes(sid string, result []byte) {
	if b.broker == nil || sid == "" {
		return
	}
	b.recordAgentModes(sid, result)
	if m := acp.MemberString(acp.MemberBytes(result, "modes"), "currentModeId"); m != "" {
		b.agentMode(sid, m)
	} else if v := modeOption(acp.MemberBytes(result, "configOptions")); v != "" {
		b.agentMode(sid, v)
	}
	if m, _ := b.broker.GateMode(sid); m == gate.ModePlan {
		b.setAgentPlanMode(sid) // --mode plan, or the agent's own: tell the model
	}
}

// addModeConfigs records ids as mode-selecting config options of session
// sid (a config_option_update may advertise new ones).
func (b *Bridge) addModeConfigs(sid string, ids []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[sid]; s != nil {
		for _, id := range ids {
			if !slices.Contains(s.modes.modeConfigs, id) {
				s.modes.modeConfigs = append(s.modes.modeConfigs, id)
			}
		}
	}
}

// modeOption returns the currentValue of the config option that selects a
// mode (id "mode" in any letter case, or category "mode").
func modeOption(raw []byte) string {
	var opts []struct {
		ID           string          `json:"id"`
		Category     string          `json:"category"`
		CurrentValue json.RawMessage `json:"currentValue"`
	}
	if json.Unmarshal(raw, &opts) != nil {
		return ""
	}
	for _, o := range opts {
		var v string
		if isModeOption(o.ID, o.Category) && json.Unmarshal(o.CurrentValue, &v) == nil {
			return v
		}
	}
	return ""
}

// CancelTurn cancels the prompt turn of session sid on acpmux's own
// initiative (the circuit breaker): session/cancel to the agent, the
// _acpmux/turn_cancelled notification with reason to every host of the
// session, and every open decision of the session cancelled. It implements
// [confirm.Sessions]. Safe for concurrent use.
func (b *Bridge) CancelTurn(sid, reason string) {
	q, _ := json.Marshal(sid)
	b.toAgent(notification(acp.MethodSessionCancel, `{"sessionId":`+string(q)+`}`))
	r, _ := json.Marshal(reason)
	note := notification(MethodTurnCancelled, `{"sessionId":`+string(q)+`,"reason":`+string(r)+`}`)
	b.mu.Lock()
	hosts := b.hosts
	if s := b.sessions[sid]; s != nil {
		hosts = s.hosts
	}
	b.mu.Unlock()
	for _, h := range hosts {
		h.send(note)
	}
	b.cancelDecisions(sid, reason)
}

// hostSetMode reports host h's session/set_mode (or
// session/set_config_option "mode") for session sid: a human act that
// engages the gate for the agent's plan mode and leaves it otherwise. It
// returns an error only when the gate is locked in plan mode and modeID is
// not a plan mode: the agent must not leave a plan mode the gate keeps.
func (b *Bridge) hostSetMode(h *Host, sid, modeID string) error {
	m := gate.ModeDefault
	if IsPlanMode(modeID) {
		m = gate.ModePlan
	}
	cur, _ := b.broker.GateMode(sid)
	_, err := b.broker.SetMode(sid, m, describeHost(h)+" selected mode "+modeID)
	switch {
	case errors.Is(err, gate.ErrModeLocked) && cur == gate.ModePlan:
		return fmt.Errorf("%w: plan mode is locked (--lock-mode): mode %q refused", acp.ErrForbidden, modeID)
	case err != nil && !errors.Is(err, gate.ErrModeLocked):
		b.log.Warn("gate mode not changed", "session", sid, "mode", modeID, "err", err)
	}
	return nil
}

// agentMode reports the agent's own mode for sid (current_mode_update,
// config_option_update, the session/new result): its plan mode engages the
// gate; any other mode of the agent's is only logged (it never leaves it).
func (b *Bridge) agentMode(sid, modeID string) {
	if IsPlanMode(modeID) {
		b.broker.EngagePlan(sid, "agent reported mode "+modeID)
		return
	}
	if m, _ := b.broker.GateMode(sid); m == gate.ModePlan {
		b.log.Info("the agent reports a mode other than plan; the gate stays in plan mode until a human leaves it", "session", sid, "agentMode", modeID)
	}
}
