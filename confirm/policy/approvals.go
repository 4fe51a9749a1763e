package policy

import (
	"errors"
	"fmt"
	"slices"
)

// MaxQuorum bounds a rule's quorum.
const MaxQuorum = 16

// Approval is who may answer a decision an ask rule matched
// (docs/policy.md, "Approvers and quorum"). The zero value lets one answer
// of anyone whose role may answer decide.
type Approval struct {
	// Approvers, when not nil, are the only people who may answer; an
	// empty non-nil list (matching rules with disjoint lists) lets nobody.
	Approvers []string `json:"approvers,omitempty"`
	// Quorum is how many distinct people must choose the same allow
	// option; 0 and 1 mean one. Any one reject decides at once.
	Quorum int `json:"quorum,omitempty"`
	// NoSelfApproval keeps the person whose prompt led to the request from
	// answering it (requester_may_approve = false).
	NoSelfApproval bool `json:"noSelfApproval,omitempty"`
}

// Needed reports how many votes an allow option needs: at least 1.
func (a Approval) Needed() int { return max(a.Quorum, 1) }

// Restricted reports whether a says anything beyond "one answer of anyone".
func (a Approval) Restricted() bool {
	return a.Approvers != nil || a.Quorum > 1 || a.NoSelfApproval
}

// and returns a with the constraints of rule r added: the approver lists
// intersect, the larger quorum wins, and any requester_may_approve = false
// holds. Several matching ask rules thus never loosen each other.
func (a Approval) and(r Rule) Approval {
	if len(r.Approvers) > 0 {
		if a.Approvers == nil {
			a.Approvers = slices.Clone(r.Approvers)
		} else {
			a.Approvers = slices.DeleteFunc(a.Approvers, func(p string) bool { return !slices.Contains(r.Approvers, p) })
		}
	}
	a.Quorum = max(a.Quorum, r.Quorum)
	if r.RequesterMayApprove != nil && !*r.RequesterMayApprove {
		a.NoSelfApproval = true
	}
	return a
}

// checkApprovers checks approvers, quorum and requester_may_approve of r.
func checkApprovers(r Rule) error {
	if r.Approvers == nil && r.Quorum == 0 && r.RequesterMayApprove == nil {
		return nil
	}
	if r.Decision != DecisionAsk {
		return errors.New(`approvers, quorum and requester_may_approve need decision = "ask"`)
	}
	if r.Approvers != nil && len(r.Approvers) == 0 {
		return errors.New("approvers = []: nobody could answer; remove the key to let anyone who may answer")
	}
	seen := map[string]bool{}
	for _, p := range r.Approvers {
		if p == "" || seen[p] {
			return fmt.Errorf("approvers: %q is empty or listed twice", p)
		}
		seen[p] = true
	}
	if r.Quorum < 0 || r.Quorum > MaxQuorum {
		return fmt.Errorf("quorum %d: want 1 to %d", r.Quorum, MaxQuorum)
	}
	if r.Approvers != nil && r.Quorum > len(r.Approvers) {
		return fmt.Errorf("quorum %d is more than the %d approvers", r.Quorum, len(r.Approvers))
	}
	return nil
}
