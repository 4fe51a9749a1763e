package sqlite

import (
	"context"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// DeleteRule implements [store.RuleRevoker].
func (s *Store) DeleteRule(ctx context.Context, key, decisionID string) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, `DELETE FROM always_rules WHERE key = ? AND json_extract(rule, '$.decisionId') = ?`, key, decisionID)
	if err != nil {
		return false, fmt.Errorf("store delete rule: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// HasRule implements [store.RuleRevoker].
func (s *Store) HasRule(ctx context.Context, key, decisionID string) (bool, error) {
	var n int
	err := s.read(func(q querier) error {
		return q.QueryRowContext(ctx, `SELECT COUNT(*) FROM always_rules WHERE key = ? AND json_extract(rule, '$.decisionId') = ?`,
			key, decisionID).Scan(&n)
	})
	if err != nil {
		return false, fmt.Errorf("store rule: %w", err)
	}
	return n > 0, nil
}

var _ store.RuleRevoker = (*Store)(nil)
