package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationPrunedChain is schema version 7: the placeholders retention
// leaves in the hash chain. When [Store.Prune] deletes a decision's
// journal, each chained row it deletes leaves its position, previous hash
// and hash here, so `acpmux audit verify` still walks an unbroken chain
// (docs/decisions.md, "Retention"); rows from before the chain started
// are taken off the head's legacy count instead.
const migrationPrunedChain = `CREATE TABLE chain_pruned (
		seq        BIGINT PRIMARY KEY,
		table_name TEXT NOT NULL,
		row_key    TEXT NOT NULL,
		prev       TEXT NOT NULL,
		hash       TEXT NOT NULL,
		pruned_at  BIGINT NOT NULL
	);`

// pruneChainedEvents records, in tx, the placeholders of the journal rows
// of the decisions that prunable (with $1 = before) selects, before Prune
// deletes them, and returns how many of those rows are from before the
// chain started: Prune takes them off the head's legacy count with
// [pruneLegacy], last in its transaction, because every chained write
// locks the head row last (locking it first could deadlock with an append
// that holds a key-share lock on a decision Prune deletes).
func pruneChainedEvents(ctx context.Context, tx pgx.Tx, before, now int64) (legacy int64, err error) {
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM decision_events WHERE chain_seq IS NULL AND decision_id IN (`+prunable+`)`,
		before).Scan(&legacy); err != nil {
		return 0, fmt.Errorf("count pruned legacy rows: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO chain_pruned (seq, table_name, row_key, prev, hash, pruned_at)
		SELECT chain_seq, 'decision_events', 'decision=' || decision_id || ' seq=' || seq, chain_prev, chain_hash, $2
		FROM decision_events WHERE chain_seq IS NOT NULL AND decision_id IN (`+prunable+`)`, before, now); err != nil {
		return 0, fmt.Errorf("keep chain placeholders: %w", err)
	}
	return legacy, nil
}

// pruneLegacy takes n pruned rows from before the chain started off the
// head's legacy count of the journal.
func pruneLegacy(ctx context.Context, tx pgx.Tx, n int64) error {
	if n == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE chain_head SET legacy_events = legacy_events - $1 WHERE id = 1`, n); err != nil {
		return fmt.Errorf("count pruned legacy rows: %w", err)
	}
	return nil
}

// prunedRows reads the placeholders as [store.ChainRow]s with Pruned set.
func prunedRows(ctx context.Context, tx pgx.Tx) ([]store.ChainRow, error) {
	rows, err := tx.Query(ctx, `SELECT seq, table_name, row_key, prev, hash FROM chain_pruned`)
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
