package store

import "context"

// RuleRevoker is implemented by stores whose ALWAYS verdicts can be
// revoked (`acpmux always revoke`, docs/policy.md "Revoking an ALWAYS
// verdict"). A broker confirms a remembered verdict with HasRule before it
// applies it, so a revoked verdict stops applying at once in every process
// sharing the store.
type RuleRevoker interface {
	// DeleteRule deletes the ALWAYS verdict with key granted by decision
	// decisionID; it reports false when there is none (a verdict of the
	// same key granted since by another decision stays).
	DeleteRule(ctx context.Context, key, decisionID string) (bool, error)
	// HasRule reports whether the ALWAYS verdict with key, granted by
	// decision decisionID, is still stored (a later grant of the same key
	// by another decision is another verdict).
	HasRule(ctx context.Context, key, decisionID string) (bool, error)
}
