package postgres

import "strings"

// migrationRuleKeys gives always_rules the id of the decision that granted
// each verdict as a column of its own (read by HasRule and by Prune's
// prunable, which no longer cast rule to jsonb: jsonb refuses the \u0000
// an ALWAYS verdict's key and target may hold). Rows stored before it
// hold no NUL (PostgreSQL refused those), so the cast of the backfill is
// safe.
const migrationRuleKeys = `ALTER TABLE always_rules ADD COLUMN decision_id TEXT NOT NULL DEFAULT '';
	UPDATE always_rules SET decision_id = COALESCE(rule::jsonb ->> 'decisionId', '');`

// A verdict's key joins its parts with NUL bytes (confirm's rememberKey),
// which a PostgreSQL text value cannot hold: the key column holds it with
// "%" written "%25" and NUL "%00" (storedKey), the rule's JSON the key
// itself (JSON escapes the NUL).
var keyEscaper = strings.NewReplacer("%", "%25", "\x00", "%00")

// storedKey is the always_rules.key value of a verdict's key.
func storedKey(key string) string { return keyEscaper.Replace(key) }
