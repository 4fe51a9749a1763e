package confirm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
)

// maxMemoryItems bounds the audit rows kept in memory without a store.
const maxMemoryItems = 10000

// afterClose runs the gate's work once d closed as res: the audit row item
// (written here unless recorded with the closing events), the circuit
// breaker, the answer's scope, and leaving plan mode when a human
// approved a switch_mode request.
func (b *Broker) afterClose(d *Decision, t transition, res Resolution, item gate.PlanItem, recorded bool) {
	if !recorded {
		b.recordItem(item)
	}
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
		Reason: res.Reason, OptionID: res.OptionID, Decision: policy.DecisionDeny, DecidedBy: decidedBy(s, t), Person: t.Person,
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
		rows, err := b.store.PlanItems(ctx, sessionID, limit)
		if err != nil {
			return nil, err
		}
		return gate.DecodePlanItems(rows)
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
