package bridge

import (
	"encoding/json"
	"strings"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/gate"
)

// agentModes is what the bridge knows of one session's modes on the agent's
// side: the plan mode it offers, if any, and the mode it is in (guarded by
// Bridge.mu, as the session is).
type agentModes struct {
	planID    string // the offered mode whose id contains "plan", or ""
	viaConfig bool   // planID is a value of the "mode" config option, not a mode id
	configID  string // that option's id
	current   string // the agent's current mode id (or mode option value)
	// modeConfigs are the ids of the advertised config options that select
	// a mode (id "mode" in any case, or category "mode").
	modeConfigs []string
}

// offeredPlanMode finds the agent's plan mode in a session/new result: a
// modes.availableModes entry whose id contains "plan", else a value of the
// config option with id "mode" that contains "plan" (ACP "Session Modes"
// and "Session Config Options").
func offeredPlanMode(result []byte) agentModes {
	var r struct {
		Modes struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
		ConfigOptions []struct {
			ID           string          `json:"id"`
			Category     string          `json:"category"`
			CurrentValue json.RawMessage `json:"currentValue"`
			Options      []struct {
				Value   string `json:"value"`
				Options []struct {
					Value string `json:"value"`
				} `json:"options"` // a group of options
			} `json:"options"`
		} `json:"configOptions"`
	}
	if json.Unmarshal(result, &r) != nil {
		return agentModes{}
	}
	for _, m := range r.Modes.AvailableModes {
		if containsPlan(m.ID) {
			return agentModes{planID: m.ID, current: r.Modes.CurrentModeID}
		}
	}
	for _, o := range r.ConfigOptions {
		if !isModeOption(o.ID, o.Category) {
			continue
		}
		var cur string
		json.Unmarshal(o.CurrentValue, &cur)
		for _, v := range o.Options {
			for _, val := range append([]string{v.Value}, groupValues(v.Options)...) {
				if containsPlan(val) {
					return agentModes{planID: val, viaConfig: true, configID: o.ID, current: cur}
				}
			}
		}
	}
	return agentModes{}
}

func groupValues(opts []struct {
	Value string `json:"value"`
}) []string {
	vs := make([]string, 0, len(opts))
	for _, o := range opts {
		vs = append(vs, o.Value)
	}
	return vs
}

func containsPlan(id string) bool { return strings.Contains(strings.ToLower(id), "plan") }

// inPlan reports whether the agent is in its plan mode.
func (m *agentModes) inPlan() bool {
	return m.current != "" && (m.current == m.planID || IsPlanMode(m.current))
}

// recordAgentModes keeps the plan mode the agent offers for session sid.
func (b *Bridge) recordAgentModes(sid string, result []byte) {
	m := offeredPlanMode(result)
	m.modeConfigs = modeConfigIDs(acp.MemberBytes(result, "configOptions"))
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[sid]; s != nil {
		s.modes = m
	}
}

// agentModeIs records that the agent of sid is (or was asked to be) in
// mode id.
func (b *Bridge) agentModeIs(sid, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[sid]; s != nil && id != "" {
		s.modes.current = id
	}
}

// GateModeChanged implements [confirm.ModeSessions]: when the gate enters
// plan mode, the agent is put in its own plan mode too.
func (b *Bridge) GateModeChanged(sid string, m gate.Mode) {
	if m == gate.ModePlan {
		b.setAgentPlanMode(sid)
	}
}

// setAgentPlanMode asks the agent of sid for its plan mode (session/set_mode,
// or session/set_config_option for a "mode" option), so the model is told
// before it tries a tool, unless Options.NoAgentPlanMode is set, the agent
// offers none, or it is in it already. The request is acpmux's own: its
// response goes to no host.
func (b *Bridge) setAgentPlanMode(sid string) {
	if b.opts.NoAgentPlanMode {
		return
	}
	b.mu.Lock()
	s := b.sessions[sid]
	if s == nil || s.modes.planID == "" || s.modes.inPlan() {
		b.mu.Unlock()
		return
	}
	m := s.modes
	s.modes.current = m.planID
	bid, bkey := b.mintBridgeID()
	b.own[bkey] = true
	b.mu.Unlock()
	q, _ := json.Marshal(sid)
	v, _ := json.Marshal(m.planID)
	method, params := acp.MethodSessionSetMode, `{"sessionId":`+string(q)+`,"modeId":`+string(v)+`}`
	if m.viaConfig {
		c, _ := json.Marshal(m.configID)
		method, params = MethodSessionSetConfigOption, `{"sessionId":`+string(q)+`,"configId":`+string(c)+`,"value":`+string(v)+`}`
	}
	msg := []byte(`{"jsonrpc":"2.0","id":` + string(bid) + `,"method":"` + method + `","params":` + params + `}`)
	b.log.Info("gate in plan mode: asking the agent for its plan mode", "session", sid, "method", method, "mode", m.planID)
	b.toAgent(msg)
}

// ownResponseLocked reports whether key is the id of one of acpmux's own
// requests to the agent, and forgets it. b.mu is held.
func (b *Bridge) ownResponseLocked(key string) bool {
	if !b.own[key] {
		return false
	}
	delete(b.own, key)
	return true
}
