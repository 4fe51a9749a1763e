package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationChain is schema version 5: the hash chain over the journal, the
// audit rows, mode changes and votes (docs/security.md). Each chained row
// gets chain_seq (its position, from 1), chain_prev (the hash of the row
// before it) and chain_hash; chain_head holds the newest position and hash
// and how many rows each table had when the chain started (those keep NULL
// chain columns: the chain starts at this migration).
const migrationChain = `ALTER TABLE decision_events ADD COLUMN chain_seq BIGINT, ADD COLUMN chain_prev TEXT, ADD COLUMN chain_hash TEXT;
	ALTER TABLE plan_items ADD COLUMN chain_seq BIGINT, ADD COLUMN chain_prev TEXT, ADD COLUMN chain_hash TEXT;
	ALTER TABLE mode_events ADD COLUMN chain_seq BIGINT, ADD COLUMN chain_prev TEXT, ADD COLUMN chain_hash TEXT;
	ALTER TABLE votes ADD COLUMN chain_seq BIGINT, ADD COLUMN chain_prev TEXT, ADD COLUMN chain_hash TEXT;
	CREATE TABLE chain_head (
		id                  INTEGER PRIMARY KEY CHECK (id = 1),
		seq                 BIGINT NOT NULL,
		hash                TEXT NOT NULL,
		legacy_events       BIGINT NOT NULL,
		legacy_plan_items   BIGINT NOT NULL,
		legacy_mode_events  BIGINT NOT NULL,
		legacy_votes        BIGINT NOT NULL
	);
	INSERT INTO chain_head VALUES (1, 0, '', (SELECT COUNT(*) FROM decision_events), (SELECT COUNT(*) FROM plan_items),
		(SELECT COUNT(*) FROM mode_events), (SELECT COUNT(*) FROM votes));`

// chainedInsert runs query, an INSERT … VALUES whose last three
// placeholders are chain_seq, chain_prev and chain_hash, with args and the
// next chain position for content, in tx, as one statement: it locks the
// head row (SELECT … FOR UPDATE in a WITH clause), computes the row's hash
// in the database exactly as [store.ChainHash] does (hex SHA-256 of the
// previous hash, a newline and content), inserts the row and, when a row
// was inserted, moves the head on. The head lock serialises the appends of
// every process and machine: a concurrent append waits for this
// transaction to end, so the caller takes it last, and best with no round
// trip to the client before COMMIT: tx is then the pool (the statement is
// its own transaction) or the statement ends a pipelined batch. Every transaction takes the head after any
// other row lock it needs, so the head never takes part in a deadlock.
func chainedInsert(ctx context.Context, tx querier, content []byte, query string, args ...any) (bool, error) {
	tag, err := tx.Exec(ctx, chainedQuery(query, len(args)), append(args, content)...)
	if err != nil {
		return false, fmt.Errorf("chained insert: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// chainedPrefix begins every chainedQuery: the lock of the chain head.
const chainedPrefix = `WITH head AS (SELECT seq, hash FROM chain_head WHERE id = 1 FOR UPDATE)`

// chainedQuery returns the statement of chainedInsert for query with n
// arguments before its chain placeholders; content is argument n+1. The
// statements are built once each (builtChained).
func chainedQuery(query string, n int) string {
	key := chainedKey{query, n}
	if q, ok := builtChained.Load(key); ok {
		return q.(string)
	}
	q := buildChainedQuery(query, n)
	builtChained.Store(key, q)
	return q
}

// chainedKey names a statement of chainedQuery.
type chainedKey struct {
	query string
	n     int
}

// builtChained holds the statements chainedQuery built, by chainedKey:
// the queries are the store's own constants, so it stays small.
var builtChained sync.Map

// buildChainedQuery builds the statement of chainedQuery.
func buildChainedQuery(query string, n int) string {
	for i, v := range []string{ // $n+3, $n+2, $n+1: none is a prefix of another placeholder
		`(SELECT encode(sha256(convert_to(hash || E'\n', 'UTF8') || @content::bytea), 'hex') FROM head)`,
		`(SELECT hash FROM head)`,
		`(SELECT seq + 1 FROM head)`,
	} {
		p := fmt.Sprintf("$%d", n+3-i)
		if strings.Count(query, p) != 1 {
			panic("chained insert: the chain columns' placeholders are not the query's last three")
		}
		query = strings.Replace(query, p, v, 1)
	}
	query = strings.Replace(query, "@content", fmt.Sprintf("$%d", n+1), 1) // content's placeholder: the first free one
	return chainedPrefix + `,
		chained AS (` + query + ` RETURNING chain_seq, chain_hash)
		UPDATE chain_head SET seq = chained.chain_seq, hash = chained.chain_hash FROM chained WHERE chain_head.id = 1`
}

// pipelinedTags runs b's statements in one round trip and one implicit
// transaction (the extended protocol's statements up to its Sync) and
// returns each statement's command tag: a failing statement rolls back
// every one before it and skips the rest. So a chained insert last in b
// holds the chain head for no round trip.
func (s *Store) pipelinedTags(ctx context.Context, b *pgx.Batch) ([]pgconn.CommandTag, error) {
	br := s.pool.SendBatch(ctx, b)
	tags := make([]pgconn.CommandTag, 0, b.Len())
	for range b.Len() {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return nil, err
		}
		tags = append(tags, tag)
	}
	return tags, br.Close()
}

// inTx runs fn in one transaction.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// chainQueries read every chained table: the columns of its content in
// order, then the four chain columns (lane, position, previous hash, hash).
var chainQueries = []struct {
	table, query string
	key          func(f []any) string
}{
	{store.ChainDecisionEvents, `SELECT decision_id, seq::BIGINT, at, type, host, detail, person, chain_lane, chain_seq, chain_prev, chain_hash FROM decision_events`,
		func(f []any) string { return fmt.Sprintf("decision=%v seq=%v", f[0], f[1]) }},
	{store.ChainPlanItems, `SELECT id, session_id, decided_at, item, chain_lane, chain_seq, chain_prev, chain_hash FROM plan_items`,
		func(f []any) string { return fmt.Sprintf("decision=%v", f[0]) }},
	{store.ChainModeEvents, `SELECT session_id, at, mode, revision, "by", chain_lane, chain_seq, chain_prev, chain_hash FROM mode_events`,
		func(f []any) string { return fmt.Sprintf("session=%v at=%v", f[0], f[1]) }},
	{store.ChainVotes, `SELECT decision_id, person, option_id, snapshot_sha256, at, chain_lane, chain_seq, chain_prev, chain_hash FROM votes`,
		func(f []any) string { return fmt.Sprintf("decision=%v person=%v", f[0], f[1]) }},
	{store.ChainPruneEvents, `SELECT id, kind, at, pruned_before, placeholders, placeholders_sha256, legacy_events, legacy_plan_items,
		legacy_mode_events, legacy_votes, chain_lane, chain_seq, chain_prev, chain_hash FROM prune_events`,
		func(f []any) string { return fmt.Sprintf("%v=%v", f[1], f[0]) }}, // pruneevents.go
}

// ChainState implements [store.Chain], in one REPEATABLE READ read-only
// transaction (one snapshot of every table).
func (s *Store) ChainState(ctx context.Context) (store.ChainHead, []store.ChainRow, error) {
	var h store.ChainHead
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return h, nil, fmt.Errorf("store chain: %w", err)
	}
	defer tx.Rollback(ctx)
	if h, err = chainHead(ctx, tx); err != nil {
		return h, nil, fmt.Errorf("store chain: read head: %w", err)
	}
	if h.Lanes, err = laneHeads(ctx, tx); err != nil { // lanes.go
		return h, nil, fmt.Errorf("store chain: read lane heads: %w", err)
	}
	var out []store.ChainRow
	for _, cq := range chainQueries {
		rows, err := tx.Query(ctx, cq.query)
		if err != nil {
			return h, nil, fmt.Errorf("store chain: %w", err)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				rows.Close()
				return h, nil, fmt.Errorf("store chain: %w", err)
			}
			out = append(out, chainRow(cq.table, cq.key, vals))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return h, nil, fmt.Errorf("store chain: %w", err)
		}
	}
	pruned, err := prunedRows(ctx, tx)
	if err != nil {
		return h, nil, fmt.Errorf("store chain: %w", err)
	}
	return h, append(out, pruned...), nil
}

// chainHead reads the head row.
func chainHead(ctx context.Context, q querier) (store.ChainHead, error) {
	var h store.ChainHead
	var ev, pi, me, vo int64
	if err := q.QueryRow(ctx, `SELECT seq, hash, legacy_events, legacy_plan_items, legacy_mode_events, legacy_votes
		FROM chain_head WHERE id = 1`).Scan(&h.Seq, &h.Hash, &ev, &pi, &me, &vo); err != nil {
		return h, err
	}
	h.Legacy = map[string]int64{store.ChainDecisionEvents: ev, store.ChainPlanItems: pi, store.ChainModeEvents: me, store.ChainVotes: vo}
	return h, nil
}

// chainRow builds a row from its content columns and the four chain
// columns at the end.
func chainRow(table string, key func([]any) string, vals []any) store.ChainRow {
	n := len(vals) - 4
	content := vals[:n]
	r := store.ChainRow{Table: table, Key: key(content), Content: store.ChainContent(table, content...)}
	r.Lane, _ = vals[n].(int64)
	if seq, ok := vals[n+1].(int64); ok {
		r.Seq = seq
	}
	r.Prev, _ = vals[n+2].(string)
	r.Hash, _ = vals[n+3].(string)
	return r
}

var _ store.Chain = (*Store)(nil)
