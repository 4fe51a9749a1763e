package gate

import "github.com/acpmux/acpmux/confirm/policy"

// Route is a way a permission request can take through the gate
// ([Info].Route; docs/plan-mode.md).
type Route string

// Routes of the gate.
const (
	RouteAllow     Route = "allow"      // answered at once with an offered allow_once option; no host sees it
	RouteDeny      Route = "deny"       // answered at once with the reject option; no host sees it
	RoutePlanBlock Route = "plan_block" // plan mode blocked a write or an edit; no host sees it
	RouteOneOff    Route = "one_off"    // exact one-off prompt: only allow_once and reject_once are offered
	RouteAsk       Route = "ask"        // the agent's own prompt, to every eligible host
)

// Built-in decidedBy names.
const (
	BuiltinPlanReadOnly = "builtin:plan-read-only"  // read-only shell commands run in plan mode
	BuiltinPlanDiverges = "builtin:plan-diverges"   // plan mode refuses commands bash may read differently
	BuiltinPlanBlock    = "builtin:plan-block"      // writes, edits, deletes and moves are blocked in plan mode
	BuiltinPlanOneOff   = "builtin:plan-one-off"    // unknown shell commands ask an exact one-off prompt
	BuiltinSwitchMode   = "builtin:switch-mode"     // leaving plan mode always asks a human
	BuiltinDataSource   = "builtin:data-source"     // read/search/fetch/think/interactive precheck passed
	BuiltinBreaker      = "builtin:circuit-breaker" // the breaker tripped in this turn
	BuiltinModeLocked   = "builtin:mode-locked"     // --lock-mode: switch_mode cannot leave plan mode
	DecidedByDefaultAsk = "default:ask"             // no rule matched: the agent's prompt goes to the hosts
)

// PlanShell is the plan-mode rows of the gate's routing table for a shell
// command of class ("read-only", "write", "unknown"), given whether bash
// may read it differently from the classifier (diverges) and the policy
// verdict ([policy.DecisionAllow], [policy.DecisionAsk], or "" when no rule matched; never
// [policy.DecisionDeny], which beats plan mode). It returns the route, the builtin
// that decided ("" when the policy rule did) and the fixed message for the
// agent ("" when there is none). A one-off prompt's warning is
// [UnknownWarning], or [ReadOnlyAskWarning] for a read-only
// command. The broker and the Claude Code hook (acpmux hook claude) route
// with it. Pure; see docs/plan-mode.md.
func PlanShell(class string, diverges bool, verdict policy.Decision) (r Route, builtin, message string) {
	switch {
	case diverges && class != "write":
		// What a human would read is not the program bash runs: no
		// prompt can make it safe, and no allow rule can either.
		return RoutePlanBlock, BuiltinPlanDiverges, DivergeBlockMessage
	case class == "write":
		return RoutePlanBlock, BuiltinPlanBlock, WriteBlockMessage
	case class == "read-only" && verdict == policy.DecisionAllow:
		return RouteAllow, "", ReadOnlyAllowMessage
	case class == "read-only" && verdict == policy.DecisionAsk:
		return RouteOneOff, "", ""
	case class == "read-only":
		return RouteAllow, BuiltinPlanReadOnly, ReadOnlyAllowMessage
	case verdict != "":
		return RouteOneOff, "", ""
	}
	return RouteOneOff, BuiltinPlanOneOff, ""
}
