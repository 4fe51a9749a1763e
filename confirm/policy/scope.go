package policy

import "errors"

// Scope is how long an answer's verdict applies beyond the one decision
// (docs/policy.md). The HTTP API takes it in the answer's "scope" member,
// an ACP host in the result's _meta.acpmux.scope; "" means [ScopeOnce].
type Scope string

// The scopes of an answer.
const (
	ScopeOnce    Scope = "ONCE"    // this decision only (the default)
	ScopeSession Scope = "SESSION" // the same (agent, tool kind, command or title) for the rest of the session, in memory
	ScopeAlways  Scope = "ALWAYS"  // a rule in the store, effective from the next evaluation, in every later session
)

// Errors of a scoped answer. The broker (package confirm) returns both
// wrapped together with its ErrInvalidAnswer, so the decision stays open
// (HTTP 400) and an ACP host that sent one abstains.
var (
	// ErrScopeRefused: SESSION or ALWAYS for an exact one-off prompt (plan
	// mode), whose approval is never persistent; or an unknown scope.
	ErrScopeRefused = errors.New("scope refused")
	// ErrAlwaysUnavailable: ALWAYS without a durable store (no store, or
	// --state :memory:). Never silently downgraded to SESSION or ONCE.
	ErrAlwaysUnavailable = errors.New("scope ALWAYS needs a durable store (not --state :memory:)")
)
