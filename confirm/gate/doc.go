// Package gate is the pure part of acpmux's plan-mode gate: the routes a
// permission request can take ([Route]), the plan-mode rows of the routing
// table for a shell command ([PlanShell]), the built-in decidedBy names,
// and the fixed messages the gate and the Claude Code hook (acpmux hook
// claude) give the agent. Both the broker (package confirm) and the hook
// route with it, so they cannot disagree. Messages are fixed text: hosts,
// agents and tests match them byte for byte. See docs/plan-mode.md.
package gate
