package postgres

import (
	"context"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// Settled implements [store.SettledReader]: one statement for all of ids.
func (s *Store) Settled(ctx context.Context, ids []string) ([]store.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recordColumns+`, `+journalColumn+` FROM decisions
		WHERE id = ANY($1) AND (delivered_at IS NOT NULL OR status NOT IN ('open', 'answered'))`, ids)
	if err != nil {
		return nil, fmt.Errorf("store settled: %w", err)
	}
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		var journal []byte
		r, err := scanRecord(rows, &journal)
		if err == nil {
			r.Events, err = decodeJournal(journal)
		}
		if err != nil {
			return nil, fmt.Errorf("store settled: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store settled: %w", err)
	}
	return out, nil
}

var _ store.SettledReader = (*Store)(nil)
