// Package gate is the pure part of acpmux's plan-mode gate: a session's
// gate [Mode], the routes a permission request can take ([Route]), the
// plan-mode rows of the routing table for a shell command ([PlanShell]),
// how a request was routed ([Info]) and what the hosts are told when the
// gate refused it ([Blocked]), the audit row of every decided request
// ([PlanItem]), the built-in decidedBy names, and the fixed messages the
// gate and the Claude Code hook (acpmux hook claude) give the agent. Both
// the broker (package confirm) and the hook route with it, so they cannot
// disagree. Messages are fixed text: hosts, agents and tests match them
// byte for byte. See docs/plan-mode.md.
package gate
