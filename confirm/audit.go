package confirm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
)

// PlanItem is the audit row of one permission request: the
// snapshot fields as they were when it was decided, written once when the
// decision closes and never changed afterwards (the store refuses UPDATE
// and DELETE on plan_items). JSON in camelCase, as served by GET
// /v1/sessions/{sessionId}/plan-items and printed by acpmux audit --json.
type PlanItem struct {
	ID         string          `json:"id"` // the decision id
	SessionID  string          `json:"sessionId"`
	ToolCallID string          `json:"toolCallId"`
	Kind       string          `json:"kind"`
	Title      string          `json:"title"`
	Command    string          `json:"command,omitempty"`
	Class      string          `json:"class,omitempty"`
	Reasons    []string        `json:"reasons,omitempty"`
	Preview    string          `json:"preview,omitempty"` // from diff content
	Mode       gate.Mode       `json:"mode"`
	Route      gate.Route      `json:"route"`
	Policy     policy.Decision `json:"policy"`   // the policy verdict: allow, ask, deny, "" (no rule)
	Decision   policy.Decision `json:"decision"` // what the agent got: allow or deny
	DecidedBy  string          `json:"decidedBy"`
	Downgraded bool            `json:"downgraded,omitempty"` // an ask downgraded to deny (data source or interactive)
	OptionID   string          `json:"optionId,omitempty"`   // the option the agent received, "" for cancelled
	Scope      policy.Scope    `json:"scope,omitempty"`
	Status     store.Status    `json:"status"`
	Reason     store.Reason    `json:"reason"`
	Message    string          `json:"message,omitempty"`
	Producer   string          `json:"producer,omitempty"` // host that owns the session
	Agent      string          `json:"agent,omitempty"`
	CreatedAt  time.Time       `json:"createdAt"`
	DecidedAt  time.Time       `json:"decidedAt"`
}

// maxMemoryItems bounds the audit rows kept in memory without a store.
const maxMemoryItems = 10000

// afterClose runs the gate's work once d closed as res: the audit row, the
// circuit breaker, the answer's scope, and leaving plan mode when a human
// approved a switch_mode request.
func (b *Broker) afterClose(d *Decision, t transition, res Resolution) {
	item := b.planItem(d, t, res)
	b.recordItem(item)
	if t.Status == store.StatusAnswered && t.Reason == store.ReasonAnswered {
		b.remember(d, t.Answer, t.By)
	}
	b.countOutcome(d.snap.SessionID, item.Decision != policy.DecisionAllow, res.Reason)
	if g := d.snap.Gate; g != nil && kindOf(&d.snap) == "switch_mode" && item.Decision == policy.DecisionAllow &&
		t.Reason == store.ReasonAnswered && g.Mode == gate.ModePlan && res.OptionID != "plan" {
		b.SetMode(d.snap.SessionID, gate.ModeDefault, fmt.Sprintf("host %s approved switch_mode (optionId %q) of decision %s", t.By, res.OptionID, d.id))
	}
}

// planItem builds the audit row of d closed by t.
func (b *Broker) planItem(d *Decision, t transition, res Resolution) gate.PlanItem {
	s := &d.snap
	it := gate.PlanItem{ID: d.id, SessionID: s.SessionID, ToolCallID: s.ToolCall.ToolCallID, Kind: kindOf(s),
		Title: s.Title, Command: s.Command, Preview: preview(s.ToolCall.Content), Status: res.Status,
		Reason: res.Reason, OptionID: res.OptionID, Decision: policy.DecisionDeny, DecidedBy: decidedBy(s, t),
		Message: gateMessage(s, t), CreatedAt: d.created, DecidedAt: res.At}
	if s.Classification != nil {
		it.Class, it.Reasons = s.Classification.Class, s.Classification.Reasons
	}
	if g := s.Gate; g != nil {
		it.Mode, it.Route, it.Policy, it.Downgraded, it.Producer, it.Agent = g.Mode, g.Route, g.Policy, g.Downgraded, g.Producer, g.Agent
	}
	for _, o := range s.Options {
		if o.OptionID == res.OptionID && mayApprove(o) {
			it.Decision = policy.DecisionAllow
		}
	}
	if t.Answer != nil {
		it.Scope = t.Answer.Scope
	}
	return it
}

// preview renders the diff content of a tool call as a short unified-style
// text (at most 4 KiB): "--- path" / "+++ path" then -old and +new lines.
func preview(content []byte) string {
	var b strings.Builder
	for _, df := range diffsOf(content) {
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", df.Path, df.Path)
		if df.OldText != nil {
			for _, l := range strings.Split(*df.OldText, "\n") {
				b.WriteString("-" + l + "\n")
			}
		}
		for _, l := range strings.Split(df.NewText, "\n") {
			b.WriteString("+" + l + "\n")
		}
	}
	out := b.String()
	if len(out) > 4096 {
		out = out[:4096] + "…"
	}
	return out
}

// recordItem writes the audit row to the store, or keeps it in memory.
func (b *Broker) recordItem(it gate.PlanItem) {
	if b.store != nil {
		doc, err := json.Marshal(it)
		if err == nil {
			err = b.store.InsertPlanItem(context.Background(), store.PlanItem{ID: it.ID, SessionID: it.SessionID, DecidedAt: it.DecidedAt, Item: doc})
		}
		if err != nil {
			b.log.Warn("confirm: cannot store plan item", "decision", it.ID, "err", err)
		}
		return
	}
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	b.g.items = append(b.g.items, it)
	if len(b.g.items) > maxMemoryItems {
		b.g.items = b.g.items[1:]
	}
}

// PlanItems returns the audit rows of sessionID (every session when ""),
// oldest first, at most limit (0 means 1000), from the store or from
// memory. An error comes only from the store.
func (b *Broker) PlanItems(ctx context.Context, sessionID string, limit int) ([]gate.PlanItem, error) {
	if limit <= 0 {
		limit = maxListed
	}
	if b.store != nil {
		return StoredPlanItems(ctx, b.store, sessionID, limit)
	}
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	out := []gate.PlanItem{}
	for _, it := range b.g.items {
		if sessionID == "" || it.SessionID == sessionID {
			out = append(out, it)
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

// StoredPlanItems returns the audit rows of sessionID (every session when
// "") in st, oldest first, at most limit, as [Broker.PlanItems] does; acpmux
// audit reads a store with it while no broker runs. An error comes from the
// store, or says a row cannot be decoded.
func StoredPlanItems(ctx context.Context, st store.Store, sessionID string, limit int) ([]gate.PlanItem, error) {
	rows, err := st.PlanItems(ctx, sessionID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]gate.PlanItem, 0, len(rows))
	for _, r := range rows {
		var it gate.PlanItem
		if err := json.Unmarshal(r.Item, &it); err != nil {
			return nil, fmt.Errorf("plan item %s: %w", r.ID, err)
		}
		out = append(out, it)
	}
	return out, nil
}
