package confirm

import (
	"context"
	"encoding/json"
	"fmt"
)

// GateStore is what the plan-mode gate needs of a durable store: audit rows
// (plan items), ALWAYS verdicts and gate mode changes. SQLiteStore
// implements it; a Store without it keeps plan items in memory and refuses
// ALWAYS answers (ErrAlwaysUnavailable).
type GateStore interface {
	// Durable reports whether what is written survives the process (false
	// for --state :memory:).
	Durable() bool
	// InsertPlanItem writes one audit row; rows are never updated.
	InsertPlanItem(ctx context.Context, it PlanItem) error
	// PlanItems returns up to limit rows of sessionID ("" for all), oldest first.
	PlanItems(ctx context.Context, sessionID string, limit int) ([]PlanItem, error)
	// InsertRule stores an ALWAYS verdict, replacing one with the same key.
	InsertRule(ctx context.Context, r StoredRule) error
	// Rules returns every stored ALWAYS verdict.
	Rules(ctx context.Context) ([]StoredRule, error)
	// InsertModeEvent journals one gate mode change.
	InsertModeEvent(ctx context.Context, ev ModeEvent) error
}

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

// Durable implements GateStore.
func (s *SQLiteStore) Durable() bool { return !s.memory }

// InsertPlanItem implements GateStore. A second row for the same decision
// id is ignored: the first one stays.
func (s *SQLiteStore) InsertPlanItem(ctx context.Context, it PlanItem) error {
	b, err := json.Marshal(it)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.ExecContext(ctx, `INSERT INTO plan_items (id, session_id, decided_at, item) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`, it.ID, it.SessionID, nanos(it.DecidedAt), string(b))
	if err != nil {
		return fmt.Errorf("store plan item: %w", err)
	}
	return nil
}

// PlanItems implements GateStore.
func (s *SQLiteStore) PlanItems(ctx context.Context, sessionID string, limit int) ([]PlanItem, error) {
	out := []PlanItem{}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT item FROM (SELECT item, decided_at, rowid FROM plan_items
			WHERE ? = '' OR session_id = ? ORDER BY decided_at DESC, rowid DESC LIMIT ?) ORDER BY decided_at, rowid`,
			sessionID, sessionID, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var raw string
			var it PlanItem
			if err := rows.Scan(&raw); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(raw), &it); err != nil {
				return err
			}
			out = append(out, it)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store plan items: %w", err)
	}
	return out, nil
}

// InsertRule implements GateStore.
func (s *SQLiteStore) InsertRule(ctx context.Context, r StoredRule) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err = s.w.ExecContext(ctx, `INSERT INTO always_rules (key, decision, created_at, rule) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET decision = excluded.decision, created_at = excluded.created_at, rule = excluded.rule`,
		r.Key, r.Decision, nanos(r.CreatedAt), string(b))
	if err != nil {
		return fmt.Errorf("store rule: %w", err)
	}
	return nil
}

// Rules implements GateStore.
func (s *SQLiteStore) Rules(ctx context.Context) ([]StoredRule, error) {
	var out []StoredRule
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT rule FROM always_rules ORDER BY created_at`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var raw string
			var r StoredRule
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

// InsertModeEvent implements GateStore.
func (s *SQLiteStore) InsertModeEvent(ctx context.Context, ev ModeEvent) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.w.ExecContext(ctx, `INSERT INTO mode_events (session_id, at, mode, revision, by) VALUES (?, ?, ?, ?, ?)`,
		ev.SessionID, nanos(ev.At), string(ev.Mode), ev.Revision, ev.By)
	if err != nil {
		return fmt.Errorf("store mode event: %w", err)
	}
	return nil
}
