package gate

import "github.com/acpmux/acpmux/confirm/policy"

// Info records how the gate routed a request; it is part of a decision's
// immutable snapshot (JSON "gate").
type Info struct {
	Mode           Mode            `json:"mode"`           // gate mode when the request arrived
	ModeRevision   uint64          `json:"modeRevision"`   // its revision
	PolicyRevision uint64          `json:"policyRevision"` // revision of the policy rules
	Route          Route           `json:"route"`          // a [Route]
	Policy         policy.Decision `json:"policy"`         // the policy verdict: allow, ask, deny; "" when no rule matched
	DecidedBy      string          `json:"decidedBy"`      // rule:NAME, a builtin:..., session:/always: verdict, default:ask
	Downgraded     bool            `json:"downgraded,omitempty"`
	Message        string          `json:"message,omitempty"` // fixed message for the agent when the gate decided
	Agent          string          `json:"agent,omitempty"`
	Producer       string          `json:"producer,omitempty"` // host that owns the session
	Key            string          `json:"key"`                // the remember key (agent, kind, command or title)
	// Approval is who may answer, from the matching ask rules
	// (docs/policy.md, "Approvers and quorum"); nil: anyone who may answer.
	Approval *policy.Approval `json:"approval,omitempty"`
	// Requester is the person whose prompt led to the request (the
	// broker's Request.Requester).
	Requester string `json:"requester,omitempty"`
}
