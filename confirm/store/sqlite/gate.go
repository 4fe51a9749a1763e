package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationGate is schema version 2: plan items (immutable: triggers abort
// any UPDATE or DELETE), ALWAYS verdicts and gate mode changes.
const migrationGate = `CREATE TABLE plan_items (
		id          TEXT PRIMARY KEY,
		session_id  TEXT NOT NULL,
		decided_at  INTEGER NOT NULL,
		item        TEXT NOT NULL
	);
	CREATE INDEX plan_items_by_session ON plan_items (session_id, decided_at);
	CREATE TRIGGER plan_items_no_update BEFORE UPDATE ON plan_items
		BEGIN SELECT RAISE(ABORT, 'plan items are immutable'); END;
	CREATE TRIGGER plan_items_no_delete BEFORE DELETE ON plan_items
		BEGIN SELECT RAISE(ABORT, 'plan items are immutable'); END;
	CREATE TABLE always_rules (
		key         TEXT PRIMARY KEY,
		decision    TEXT NOT NULL CHECK (decision IN ('allow','deny')),
		created_at  INTEGER NOT NULL,
		rule        TEXT NOT NULL
	);
	CREATE TABLE mode_events (
		session_id  TEXT NOT NULL,
		at          INTEGER NOT NULL,
		mode        TEXT NOT NULL,
		revision    INTEGER NOT NULL,
		by          TEXT NOT NULL
	);`

// Durable implements [store.Store].
func (s *Store) Durable() bool { return !s.memory }

// InsertPlanItem implements [store.Store]. A second row for the same decision
// id is ignored: the first one stays.
func (s *Store) InsertPlanItem(ctx context.Context, it store.PlanItem) error {
	if err := s.inTx(ctx, func(tx *sql.Tx) error { return insertPlanItem(ctx, tx, it) }); err != nil {
		return fmt.Errorf("store plan item: %w", err)
	}
	return nil
}

// insertPlanItem is the chained insert of it in tx; a row of its id that
// exists is kept.
func insertPlanItem(ctx context.Context, tx *sql.Tx, it store.PlanItem) error {
	content := store.ChainContent(store.ChainPlanItems, it.ID, it.SessionID, nanos(it.DecidedAt), string(it.Item))
	_, err := chainedInsert(ctx, tx, content, `INSERT INTO plan_items (id, session_id, decided_at, item,
		chain_seq, chain_prev, chain_hash) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		it.ID, it.SessionID, nanos(it.DecidedAt), string(it.Item))
	return err
}

// PlanItems implements [store.Store].
func (s *Store) PlanItems(ctx context.Context, sessionID string, limit int) ([]store.PlanItem, error) {
	out := []store.PlanItem{}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT id, session_id, decided_at, item FROM (SELECT id, session_id, item, decided_at, rowid FROM plan_items
			WHERE ? = '' OR session_id = ? ORDER BY decided_at DESC, rowid DESC LIMIT ?) ORDER BY decided_at, rowid`,
			sessionID, sessionID, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var it store.PlanItem
			var at int64
			var raw string
			if err := rows.Scan(&it.ID, &it.SessionID, &at, &raw); err != nil {
				return err
			}
			it.DecidedAt, it.Item = fromNanos(at), json.RawMessage(raw)
			out = append(out, it)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store plan items: %w", err)
	}
	return out, nil
}

// InsertRule implements [store.Store].
func (s *Store) InsertRule(ctx context.Context, r store.Rule) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.ExecContext(ctx, `INSERT INTO always_rules (key, decision, created_at, rule) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET decision = excluded.decision, created_at = excluded.created_at, rule = excluded.rule`,
		r.Key, string(r.Decision), nanos(r.CreatedAt), string(b))
	if err != nil {
		return fmt.Errorf("store rule: %w", err)
	}
	return nil
}

// Rules implements [store.Store].
func (s *Store) Rules(ctx context.Context) ([]store.Rule, error) {
	var out []store.Rule
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT rule FROM always_rules ORDER BY created_at`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var raw string
			var r store.Rule
			if err := rows.Scan(&raw); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(raw), &r); err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store rules: %w", err)
	}
	return out, nil
}

// InsertModeEvent implements [store.Store].
func (s *Store) InsertModeEvent(ctx context.Context, ev store.ModeEvent) error {
	content := store.ChainContent(store.ChainModeEvents, ev.SessionID, nanos(ev.At), ev.Mode, int64(ev.Revision), ev.By)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := chainedInsert(ctx, tx, content, `INSERT INTO mode_events (session_id, at, mode, revision, by,
			chain_seq, chain_prev, chain_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			ev.SessionID, nanos(ev.At), ev.Mode, int64(ev.Revision), ev.By)
		return err
	})
	if err != nil {
		return fmt.Errorf("store mode event: %w", err)
	}
	return nil
}
