package gate

import (
	"encoding/json"
	"fmt"
	"time"

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
	Mode       Mode            `json:"mode"`
	Route      Route           `json:"route"`
	Policy     policy.Decision `json:"policy"`   // the policy verdict: allow, ask, deny, "" (no rule)
	Decision   policy.Decision `json:"decision"` // what the agent got: allow or deny
	DecidedBy  string          `json:"decidedBy"`
	Person     string          `json:"person,omitempty"`     // the person of the winning answer (docs/tokens.md), "" when none
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

// DecodePlanItems decodes the stored audit rows (from [store.Store.PlanItems])
// in their order; the broker's PlanItems and acpmux audit, which reads a
// store while no broker runs, read them with it. An error says which row
// cannot be decoded.
func DecodePlanItems(rows []store.PlanItem) ([]PlanItem, error) {
	out := make([]PlanItem, 0, len(rows))
	for _, r := range rows {
		var it PlanItem
		if err := json.Unmarshal(r.Item, &it); err != nil {
			return nil, fmt.Errorf("plan item %s: %w", r.ID, err)
		}
		out = append(out, it)
	}
	return out, nil
}
