package confirm

import "github.com/acpmux/acpmux/confirm/policy"

// SetPolicy replaces the broker's policy rules (the --policy file, reloaded
// on SIGHUP) and increases the policy revision. A nil p removes every rule.
// Decisions already open keep the route they were given; an approval is
// still refused as stale when the new rules deny it. Safe for concurrent use.
func (b *Broker) SetPolicy(p *policy.Policy) uint64 {
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	b.g.policy = p
	b.g.policyRev++
	return b.g.policyRev
}

// Policy returns the current policy (nil when none) and its revision.
func (b *Broker) Policy() (*policy.Policy, uint64) {
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	return b.g.policy, b.g.policyRev
}
