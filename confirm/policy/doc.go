// Package policy is the policy language of acpmux's permission gate: a TOML
// file of [[rule]] tables ([Parse], [Load]) and the pure evaluation of one
// permission request against it ([Policy.Evaluate]): deny beats ask beats
// allow, and an allow rule never approves a shell command classified write
// or unknown unless it names that class. No I/O besides [Load], no state,
// no goroutines. See docs/policy.md.
package policy
