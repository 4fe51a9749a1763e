package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationPrunedChain is schema version 7: the placeholders retention
// leaves in the hash chain. When [Store.Prune] deletes a decision's
// journal, each chained row it deletes leaves its position, previous hash
// and hash here, so `acpmux audit verify` still walks an unbroken chain
// (docs/decisions.md, "Retention"); rows from before the chain started
// are taken off the head's legacy count instead.
const migrationPrunedChain = `CREATE TABLE chain_pruned (
		seq        INTEGER PRIMARY KEY,
		table_name TEXT NOT NULL,
		row_key    TEXT NOT NULL,
		prev       TEXT NOT NULL,
		hash       TEXT NOT NULL,
		pruned_at  INTEGER NOT NULL
	);`

// pruneChainedEvents records, in tx, the placeholders of the journal rows
// of the decisions that prunable (with ?1 = before) selects, before Prune
// deletes them.
func pruneChainedEvents(ctx context.Context, tx *sql.Tx, before, now int64) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO chain_pruned (seq, table_name, row_key, prev, hash, pruned_at)
		SELECT chain_seq, 'decision_events', 'decision=' || decision_id || ' seq=' || seq, chain_prev, chain_hash, ?2
		FROM decision_events WHERE chain_seq IS NOT NULL AND decision_id IN (`+prunable+`)`, before, now); err != nil {
		return fmt.Errorf("keep chain placeholders: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chain_head SET legacy_events = legacy_events -
		(SELECT COUNT(*) FROM decision_events WHERE chain_seq IS NULL AND decision_id IN (`+prunable+`)) WHERE id = 1`, before); err != nil {
		return fmt.Errorf("count pruned legacy rows: %w", err)
	}
	return nil
}

// prunedRows reads the placeholders as [store.ChainRow]s with Pruned set.
func prunedRows(ctx context.Context, tx *sql.Tx) ([]store.ChainRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, table_name, row_key, prev, hash FROM chain_pruned`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ChainRow
	for rows.Next() {
		r := store.ChainRow{Pruned: true}
		if err := rows.Scan(&r.Seq, &r.Table, &r.Key, &r.Prev, &r.Hash); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
