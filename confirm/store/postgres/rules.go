package postgres

import (
	"context"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// DeleteRule implements [store.RuleRevoker].
func (s *Store) DeleteRule(ctx context.Context, key, decisionID string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM always_rules WHERE key = $1 AND decision_id = $2`, storedKey(key), decisionID)
	if err != nil {
		return false, fmt.Errorf("store delete rule: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}

// HasRule implements [store.RuleRevoker].
func (s *Store) HasRule(ctx context.Context, key, decisionID string) (bool, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM always_rules WHERE key = $1 AND decision_id = $2`,
		storedKey(key), decisionID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store rule: %w", err)
	}
	return n > 0, nil
}

var _ store.RuleRevoker = (*Store)(nil)
