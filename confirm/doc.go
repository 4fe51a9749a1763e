// Package confirm is the confirmation broker of acpmux: every ACP
// session/request_permission from the agent becomes a Decision that every
// eligible host can answer, exactly once, safely.
//
// It follows ACP protocol version 1, "Tool Calls / Requesting Permission"
// (https://agentclientprotocol.com/protocol/v1/tool-calls#requesting-permission),
// "Prompt Turn / Cancellation" and the request-cancellation RFD
// ($/cancel_request). The life of a decision is documented for users in
// docs/decisions.md.
//
// Invariants:
//
//   - The agent only ever receives a result the broker serialised itself from
//     validated fields: {"outcome":{"outcome":"selected","optionId":X}} with X
//     in the exact offered set, or {"outcome":{"outcome":"cancelled"}}. A
//     host's bytes are never forwarded.
//   - The first valid answer wins. The claim is a compare-and-swap in memory
//     followed by UPDATE ... WHERE status='open' (rows affected checked) in
//     the store, inside one BEGIN IMMEDIATE transaction that also writes the
//     journal event. A decision leaves the open status once and never again.
//   - Fail closed: a timeout, no eligible host, a stale snapshot or a store
//     error answer the agent with an offered reject_once option, else
//     reject_always, and {"outcome":"cancelled"} only when no reject option
//     is offered or the prompt turn was cancelled.
//   - The broker starts no goroutine of its own except the timer callbacks of
//     open decisions; Run waits for the work they start.
//
// Before a decision is presented, the plan-mode gate routes it (plan.go,
// docs/plan-mode.md): policy rules (package [policy]), the per-session gate mode
// (mode.go), remembered scopes (scope.go) and the circuit breaker
// (breaker.go) may decide it at once, and every closed decision leaves an
// immutable audit row (audit.go, docs/policy.md).
//
// Decisions are kept durably through a [store.Store] (Options.Store);
// confirm imports no database driver.
package confirm
