package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationPruneEvents adds prune_events, a chained table: one anchor row
// (kind "anchor", written by [Store.anchorChain] when the store opens),
// holding how many rows without a chain hash each table had, and one row
// per prune (kind "prune") that deleted decisions, holding how many
// placeholders it left in chain_pruned with their
// [store.PlaceholdersDigest] and how many rows without a hash it deleted.
// Each placeholder names its prune event (prune_id) and its decision, so
// `acpmux audit verify` accepts only placeholders a chained prune vouches
// for (docs/decisions.md, "Retention").
const migrationPruneEvents = `CREATE TABLE prune_events (
		id                  BIGSERIAL PRIMARY KEY,
		kind                TEXT NOT NULL CHECK (kind IN ('anchor','prune')),
		at                  BIGINT NOT NULL,
		pruned_before       BIGINT NOT NULL,
		placeholders        BIGINT NOT NULL,
		placeholders_sha256 TEXT NOT NULL,
		legacy_events       BIGINT NOT NULL,
		legacy_plan_items   BIGINT NOT NULL,
		legacy_mode_events  BIGINT NOT NULL,
		legacy_votes        BIGINT NOT NULL,
		chain_seq           BIGINT,
		chain_prev          TEXT,
		chain_hash          TEXT
	);
	ALTER TABLE chain_pruned ADD COLUMN prune_id BIGINT, ADD COLUMN decision_id TEXT NOT NULL DEFAULT '';
	UPDATE chain_pruned SET decision_id = split_part(substr(row_key, 10), ' seq=', 1) WHERE row_key LIKE 'decision=% seq=%';`

// insertPruneEvent appends e (its ID set) to prune_events, chained, in
// tx; it locks the chain head, so it comes last in its transaction.
func insertPruneEvent(ctx context.Context, tx pgx.Tx, e store.PruneEvent, at, cut int64) error {
	_, err := chainedInsert(ctx, tx, store.PruneEventContent(e, at, cut), `INSERT INTO prune_events (id, kind, at, pruned_before,
		placeholders, placeholders_sha256, legacy_events, legacy_plan_items, legacy_mode_events, legacy_votes, chain_seq, chain_prev, chain_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, e.ID, e.Kind, at, cut, e.Placeholders, e.PlaceholdersSHA256,
		e.Legacy[store.ChainDecisionEvents], e.Legacy[store.ChainPlanItems], e.Legacy[store.ChainModeEvents], e.Legacy[store.ChainVotes])
	if err != nil {
		return fmt.Errorf("append prune event: %w", err)
	}
	return nil
}

// nextPruneID takes the id of a new prune event from the table's sequence.
func nextPruneID(ctx context.Context, tx pgx.Tx) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `SELECT nextval(pg_get_serial_sequence('prune_events', 'id'))`).Scan(&id)
	return id, err
}

// anchorChain writes the chain's anchor unless it is there: the head's
// counts of rows without a hash, and the placeholders of prunes from
// before prune events (those without a prune_id), which it covers. It
// locks the head first, so that of several bridges opening at once only
// the first writes it.
func (s *Store) anchorChain(ctx context.Context, now int64) error {
	return s.inTx(ctx, func(tx pgx.Tx) error {
		h, err := chainHeadForUpdate(ctx, tx)
		if err != nil {
			return fmt.Errorf("lock chain head: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM prune_events WHERE kind = 'anchor'`).Scan(&n); err != nil || n > 0 {
			return err
		}
		e := store.PruneEvent{Kind: store.PruneKindAnchor, Legacy: h.Legacy}
		if e.ID, err = nextPruneID(ctx, tx); err != nil {
			return err
		}
		ps, err := placeholders(ctx, tx, `SELECT lane, seq, table_name, decision_id, hash FROM chain_pruned WHERE prune_id IS NULL`)
		if err != nil {
			return err
		}
		e.Placeholders, e.PlaceholdersSHA256 = int64(len(ps)), store.PlaceholdersDigest(ps)
		if _, err := tx.Exec(ctx, `UPDATE chain_pruned SET prune_id = $1 WHERE prune_id IS NULL`, e.ID); err != nil {
			return err
		}
		return insertPruneEvent(ctx, tx, e, now, now)
	})
}

// chainHeadForUpdate reads the head row and locks it.
func chainHeadForUpdate(ctx context.Context, tx pgx.Tx) (store.ChainHead, error) {
	var h store.ChainHead
	var ev, pi, me, vo int64
	if err := tx.QueryRow(ctx, `SELECT seq, hash, legacy_events, legacy_plan_items, legacy_mode_events, legacy_votes
		FROM chain_head WHERE id = 1 FOR UPDATE`).Scan(&h.Seq, &h.Hash, &ev, &pi, &me, &vo); err != nil {
		return h, err
	}
	h.Legacy = map[string]int64{store.ChainDecisionEvents: ev, store.ChainPlanItems: pi, store.ChainModeEvents: me, store.ChainVotes: vo}
	return h, nil
}

// placeholders runs query, which selects lane, seq, table, decision and hash.
func placeholders(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]store.Placeholder, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read chain placeholders: %w", err)
	}
	defer rows.Close()
	var out []store.Placeholder
	for rows.Next() {
		var p store.Placeholder
		if err := rows.Scan(&p.Lane, &p.Seq, &p.Table, &p.Decision, &p.Hash); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
