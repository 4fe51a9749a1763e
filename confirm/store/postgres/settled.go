package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/acpmux/acpmux/confirm/store"
)

// settledQuery reads those of the decisions of the ids $1 that their
// owner delivered or refused, or that closed otherwise. It runs as an
// unnamed statement (queryPlanned).
const settledQuery = `SELECT ` + recordColumns + `, ` + journalColumn + ` FROM decisions
	WHERE id = ANY($1) AND (delivered_at IS NOT NULL OR status NOT IN ('open', 'answered'))`

// Settled implements [store.SettledReader]: one statement for all of ids.
func (s *Store) Settled(ctx context.Context, ids []string) ([]store.Record, error) {
	return settled(ctx, s.pool, ids)
}

// settled is Settled on q.
func settled(ctx context.Context, q querier, ids []string) ([]store.Record, error) {
	if unstorable := func(id string) bool { return !storableID(id) }; slices.ContainsFunc(ids, unstorable) { // as groupedGet
		ids = slices.DeleteFunc(slices.Clone(ids), unstorable)
	}
	rows, err := queryPlanned(ctx, q, settledQuery, ids)
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
