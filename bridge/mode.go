package bridge

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
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

// ModeRouter is implemented by a PermissionRouter that keeps a plan-mode
// gate per session (BrokerRouter does). The bridge reports mode selections
// to it; it never changes what is relayed.
type ModeRouter interface {
	// HostSetMode reports host h's session/set_mode (or
	// session/set_config_option "mode") for session sid: a human act that
	// engages the gate for the agent's plan mode and leaves it otherwise.
	HostSetMode(h *Host, sid, modeID string)
	// AgentMode reports the agent's own mode for sid (current_mode_update,
	// config_option_update, the session/new result): it can engage the
	// gate, never leave it.
	AgentMode(sid, modeID string)
	// PromptStarted reports a host's session/prompt for sid.
	PromptStarted(sid string)
}

// IsPlanMode reports whether modeID is an agent's plan mode: "plan"
// (Claude Code, Gemini CLI, Qwen Code), in any letter case.
func IsPlanMode(modeID string) bool { return strings.EqualFold(modeID, "plan") }

func (b *Bridge) modeRouter() ModeRouter {
	mr, _ := b.opts.Permissions.(ModeRouter)
	return mr
}

// trackHostMode reports mode selections and prompts of host h. The request
// itself is relayed unchanged.
func (b *Bridge) trackHostMode(h *Host, method string, params []byte) {
	mr := b.modeRouter()
	if mr == nil {
		return
	}
	sid := acp.MemberString(params, "sessionId")
	switch method {
	case acp.MethodSessionSetMode:
		mr.HostSetMode(h, sid, acp.MemberString(params, "modeId"))
	case MethodSessionSetConfigOption:
		if acp.MemberString(params, "configId") == "mode" {
			mr.HostSetMode(h, sid, acp.MemberString(params, "value"))
		}
	case acp.MethodSessionPrompt:
		mr.PromptStarted(sid)
	}
}

// trackAgentMode reports the agent's current_mode_update and
// config_option_update ("mode") session updates.
func (b *Bridge) trackAgentMode(sid string, update []byte) {
	mr := b.modeRouter()
	if mr == nil {
		return
	}
	switch acp.MemberString(update, "sessionUpdate") {
	case "current_mode_update":
		mr.AgentMode(sid, acp.MemberString(update, "currentModeId"))
	case "config_option_update":
		if v := modeOption(acp.MemberBytes(update, "configOptions")); v != "" {
			mr.AgentMode(sid, v)
		}
	}
}

// trackSessionModes reports the mode of a new session from its result
// (modes.currentModeId, or the "mode" config option).
func (b *Bridge) trackSessionModes(sid string, result []byte) {
	mr := b.modeRouter()
	if mr == nil || sid == "" {
		return
	}
	if m := acp.MemberString(acp.MemberBytes(result, "modes"), "currentModeId"); m != "" {
		mr.AgentMode(sid, m)
	} else if v := modeOption(acp.MemberBytes(result, "configOptions")); v != "" {
		mr.AgentMode(sid, v)
	}
}

// modeOption returns the currentValue of the config option with id "mode".
func modeOption(raw []byte) string {
	var opts []struct {
		ID           string          `json:"id"`
		CurrentValue json.RawMessage `json:"currentValue"`
	}
	if json.Unmarshal(raw, &opts) != nil {
		return ""
	}
	for _, o := range opts {
		var v string
		if o.ID == "mode" && json.Unmarshal(o.CurrentValue, &v) == nil {
			return v
		}
	}
	return ""
}

// CancelTurn cancels the prompt turn of session sid on acpmux's own
// initiative (the circuit breaker): session/cancel to the agent, the
// _acpmux/turn_cancelled notification with reason to every host of the
// session, and every open decision of the session cancelled. Safe for
// concurrent use.
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
	b.permissions().CancelSession(sid, reason)
}

// HostSetMode implements ModeRouter.
func (r *BrokerRouter) HostSetMode(h *Host, sid, modeID string) {
	m := confirm.ModeDefault
	if IsPlanMode(modeID) {
		m = confirm.ModePlan
	}
	_, err := r.br.SetMode(sid, m, "host "+h.ID+" selected mode "+modeID)
	if err != nil && !errors.Is(err, confirm.ErrModeLocked) {
		r.log.Warn("gate mode not changed", "session", sid, "mode", modeID, "err", err)
	}
}

// AgentMode implements ModeRouter: the agent's plan mode engages the gate;
// any other mode of the agent's is only logged.
func (r *BrokerRouter) AgentMode(sid, modeID string) {
	if IsPlanMode(modeID) {
		r.br.EngagePlan(sid, "agent reported mode "+modeID)
		return
	}
	if m, _ := r.br.GateMode(sid); m == confirm.ModePlan {
		r.log.Info("the agent reports a mode other than plan; the gate stays in plan mode until a human leaves it", "session", sid, "agentMode", modeID)
	}
}

// PromptStarted implements ModeRouter.
func (r *BrokerRouter) PromptStarted(sid string) { r.br.PromptStarted(sid) }
