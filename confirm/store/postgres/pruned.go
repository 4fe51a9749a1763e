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
// of the decisions ids (those prunable selected, which Prune holds locked),
// before Prune deletes them, each naming the prune event it returns (its ID, count,
// digest and how many rows from before the chain started it deletes).
// Prune takes those off the head's legacy count with [pruneLegacy] and
// appends the event, chained, last in its transaction, because every
// chained write locks the head row last (locking it first could deadlock
// with an append that holds a key-share lock on a decision Prune deletes).
func pruneChainedEvents(ctx context.Context, tx pgx.Tx, ids []string, now int64) (store.PruneEvent, error) {
	e := store.PruneEvent{Kind: store.PruneKindPrune}
	var legacy int64
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM decision_events WHERE chain_seq IS NULL AND decision_id = ANY($1)`,
		ids).Scan(&legacy); err != nil {
		return e, fmt.Errorf("count pruned legacy rows: %w", err)
	}
	e.Legacy = map[string]int64{store.ChainDecisionEvents: legacy}
	var err error
	if e.ID, err = nextPruneID(ctx, tx); err != nil {
		return e, fmt.Errorf("next prune event: %w", err)
	}
	ps, err := placeholders(ctx, tx, `SELECT chain_lane, chain_seq, 'decision_events', decision_id, chain_hash
		FROM decision_events WHERE chain_seq IS NOT NULL AND decision_id = ANY($1)`, ids)
	if err != nil {
		return e, err
	}
	e.Placeholders, e.PlaceholdersSHA256 = int64(len(ps)), store.PlaceholdersDigest(ps)
	if _, err := tx.Exec(ctx, `INSERT INTO chain_pruned (lane, seq, table_name, row_key, prev, hash, pruned_at, prune_id, decision_id)
		SELECT chain_lane, chain_seq, 'decision_events', 'decision=' || decision_id || ' seq=' || seq, chain_prev, chain_hash, $2, $3, decision_id
		FROM decision_events WHERE chain_seq IS NOT NULL AND decision_id = ANY($1)`, ids, now, e.ID); err != nil {
		return e, fmt.Errorf("keep chain placeholders: %w", err)
	}
	return e, nil
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
	rows, err := tx.Query(ctx, `SELECT lane, seq, table_name, row_key, prev, hash, COALESCE(prune_id, 0), decision_id,
		EXISTS (SELECT 1 FROM decisions d WHERE d.id = chain_pruned.decision_id) FROM chain_pruned`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.ChainRow
	for rows.Next() {
		r := store.ChainRow{Pruned: true}
		if err := rows.Scan(&r.Lane, &r.Seq, &r.Table, &r.Key, &r.Prev, &r.Hash, &r.PruneID, &r.Decision, &r.DecisionExists); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
