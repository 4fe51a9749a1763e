package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationChain is schema version 5: the hash chain over the journal, the
// audit rows, mode changes and votes (docs/security.md). Each chained row
// gets chain_seq (its position, from 1), chain_prev (the hash of the row
// before it) and chain_hash; chain_head holds the newest position and hash
// and how many rows each table had when the chain started (those keep NULL
// chain columns: the chain starts at this migration).
const migrationChain = `ALTER TABLE decision_events ADD COLUMN chain_seq INTEGER;
	ALTER TABLE decision_events ADD COLUMN chain_prev TEXT;
	ALTER TABLE decision_events ADD COLUMN chain_hash TEXT;
	ALTER TABLE plan_items ADD COLUMN chain_seq INTEGER;
	ALTER TABLE plan_items ADD COLUMN chain_prev TEXT;
	ALTER TABLE plan_items ADD COLUMN chain_hash TEXT;
	ALTER TABLE mode_events ADD COLUMN chain_seq INTEGER;
	ALTER TABLE mode_events ADD COLUMN chain_prev TEXT;
	ALTER TABLE mode_events ADD COLUMN chain_hash TEXT;
	ALTER TABLE votes ADD COLUMN chain_seq INTEGER;
	ALTER TABLE votes ADD COLUMN chain_prev TEXT;
	ALTER TABLE votes ADD COLUMN chain_hash TEXT;
	CREATE TABLE chain_head (
		id                  INTEGER PRIMARY KEY CHECK (id = 1),
		seq                 INTEGER NOT NULL,
		hash                TEXT NOT NULL,
		legacy_events       INTEGER NOT NULL,
		legacy_plan_items   INTEGER NOT NULL,
		legacy_mode_events  INTEGER NOT NULL,
		legacy_votes        INTEGER NOT NULL
	);
	INSERT INTO chain_head VALUES (1, 0, '', (SELECT COUNT(*) FROM decision_events), (SELECT COUNT(*) FROM plan_items),
		(SELECT COUNT(*) FROM mode_events), (SELECT COUNT(*) FROM votes));`

// chainedInsert runs query, an INSERT whose last three placeholders are
// chain_seq, chain_prev and chain_hash, with args and the next chain
// position for content, in tx (which, as every write transaction here,
// began IMMEDIATE: it holds SQLite's one write lock, so appends of every
// process are serialised). When a row was inserted it moves the head on.
func chainedInsert(ctx context.Context, tx *sql.Tx, content []byte, query string, args ...any) (bool, error) {
	var seq int64
	var prev string
	if err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM chain_head WHERE id = 1`).Scan(&seq, &prev); err != nil {
		return false, fmt.Errorf("read chain head: %w", err)
	}
	hash := store.ChainHash(prev, content)
	res, err := tx.ExecContext(ctx, query, append(args, seq+1, prev, hash)...)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE chain_head SET seq = ?, hash = ? WHERE id = 1`, seq+1, hash); err != nil {
		return false, fmt.Errorf("move chain head: %w", err)
	}
	return true, nil
}

// inTx runs fn in one write transaction on the writing connection.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// chainQueries read every chained table: the columns of its content in
// order, then the four chain columns (lane, position, previous hash,
// hash).
var chainQueries = []struct {
	table, query string
	key          func(f []any) string
}{
	{store.ChainDecisionEvents, `SELECT decision_id, seq, at, type, host, detail, person, chain_lane, chain_seq, chain_prev, chain_hash FROM decision_events`,
		func(f []any) string { return fmt.Sprintf("decision=%v seq=%v", f[0], f[1]) }},
	{store.ChainPlanItems, `SELECT id, session_id, decided_at, item, chain_lane, chain_seq, chain_prev, chain_hash FROM plan_items`,
		func(f []any) string { return fmt.Sprintf("decision=%v", f[0]) }},
	{store.ChainModeEvents, `SELECT session_id, at, mode, revision, by, chain_lane, chain_seq, chain_prev, chain_hash FROM mode_events`,
		func(f []any) string { return fmt.Sprintf("session=%v at=%v", f[0], f[1]) }},
	{store.ChainVotes, `SELECT decision_id, person, option_id, snapshot_sha256, at, chain_lane, chain_seq, chain_prev, chain_hash FROM votes`,
		func(f []any) string { return fmt.Sprintf("decision=%v person=%v", f[0], f[1]) }},
	{store.ChainPruneEvents, `SELECT id, kind, at, pruned_before, placeholders, placeholders_sha256, legacy_events, legacy_plan_items,
		legacy_mode_events, legacy_votes, chain_lane, chain_seq, chain_prev, chain_hash FROM prune_events`,
		func(f []any) string { return fmt.Sprintf("%v=%v", f[1], f[0]) }}, // pruneevents.go
}

// ChainState implements [store.Chain], in one read transaction.
func (s *Store) ChainState(ctx context.Context) (store.ChainHead, []store.ChainRow, error) {
	var head store.ChainHead
	var rows []store.ChainRow
	err := s.read(func(q querier) error {
		db, ok := q.(interface {
			BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
		})
		if !ok {
			return fmt.Errorf("no transactions on %T", q)
		}
		tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		head, rows, err = chainState(ctx, tx)
		return err
	})
	if err != nil {
		return head, nil, fmt.Errorf("store chain: %w", err)
	}
	return head, rows, nil
}

func chainState(ctx context.Context, tx *sql.Tx) (store.ChainHead, []store.ChainRow, error) {
	var h store.ChainHead
	var ev, pi, me, vo int64
	if err := tx.QueryRowContext(ctx, `SELECT seq, hash, legacy_events, legacy_plan_items, legacy_mode_events, legacy_votes
		FROM chain_head WHERE id = 1`).Scan(&h.Seq, &h.Hash, &ev, &pi, &me, &vo); err != nil {
		return h, nil, fmt.Errorf("read chain head: %w", err)
	}
	h.Legacy = map[string]int64{store.ChainDecisionEvents: ev, store.ChainPlanItems: pi, store.ChainModeEvents: me, store.ChainVotes: vo}
	var out []store.ChainRow
	for _, cq := range chainQueries {
		rows, err := tx.QueryContext(ctx, cq.query)
		if err != nil {
			return h, nil, err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return h, nil, err
			}
			out = append(out, chainRow(cq.table, cq.key, vals))
		}
		if err := rows.Close(); err != nil {
			return h, nil, err
		}
		if err := rows.Err(); err != nil {
			return h, nil, err
		}
	}
	pruned, err := prunedRows(ctx, tx)
	if err != nil {
		return h, nil, err
	}
	return h, append(out, pruned...), nil
}

// chainRow builds a row from its content columns and the four chain
// columns at the end; text is compared as text, whatever SQLite's storage
// class.
func chainRow(table string, key func([]any) string, vals []any) store.ChainRow {
	n := len(vals) - 4
	content := make([]any, n)
	for i, v := range vals[:n] {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		content[i] = v
	}
	r := store.ChainRow{Table: table, Key: key(content), Content: store.ChainContent(table, content...)}
	r.Lane, _ = vals[n].(int64)
	if seq, ok := vals[n+1].(int64); ok {
		r.Seq = seq
	}
	r.Prev, _ = asString(vals[n+2])
	r.Hash, _ = asString(vals[n+3])
	return r
}

func asString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

var _ store.Chain = (*Store)(nil)
