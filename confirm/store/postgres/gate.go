package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// InsertPlanItem implements [store.Store]: the chained insert of it on
// this instance's chain lane, through the group commit (group.go). A
// second row for the same decision id is ignored: the first one stays (a
// trigger refuses any UPDATE or DELETE).
func (s *Store) InsertPlanItem(ctx context.Context, it store.PlanItem) error {
	chain := &chainRows{}
	chain.planItem(it)
	if _, err := s.grouped(ctx, it.ID, &pgx.Batch{}, chain); err != nil {
		return fmt.Errorf("store plan item: %w", err)
	}
	return nil
}

// insertPlanItem writes it as the next row of the main hash chain
// (chain.go) in tx, as insertEvent does an event; a row of its id that
// exists is kept.
func insertPlanItem(ctx context.Context, tx querier, it store.PlanItem) error {
	_, err := chainedInsert(ctx, tx, planItemContent(it), `INSERT INTO plan_items (id, session_id, decided_at, item,
		chain_seq, chain_prev, chain_hash) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
		it.ID, it.SessionID, nanos(it.DecidedAt), string(it.Item))
	return err
}

// planItemContent is it's chain content (store.ChainContent).
func planItemContent(it store.PlanItem) []byte {
	return store.ChainContent(store.ChainPlanItems, it.ID, it.SessionID, nanos(it.DecidedAt), string(it.Item))
}

// PlanItems implements [store.Store].
func (s *Store) PlanItems(ctx context.Context, sessionID string, limit int) ([]store.PlanItem, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, session_id, decided_at, item FROM (SELECT * FROM plan_items
		WHERE $1 = '' OR session_id = $1 ORDER BY decided_at DESC, n DESC LIMIT $2) AS newest ORDER BY decided_at, n`,
		sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("store plan items: %w", err)
	}
	defer rows.Close()
	out := []store.PlanItem{}
	for rows.Next() {
		var it store.PlanItem
		var at int64
		var raw string
		if err := rows.Scan(&it.ID, &it.SessionID, &at, &raw); err != nil {
			return nil, fmt.Errorf("store plan items: %w", err)
		}
		it.DecidedAt, it.Item = fromNanos(at), json.RawMessage(raw)
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
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
	_, err = s.pool.Exec(ctx, `INSERT INTO always_rules (key, decision, created_at, rule, decision_id) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (key) DO UPDATE SET decision = excluded.decision, created_at = excluded.created_at, rule = excluded.rule,
		decision_id = excluded.decision_id`,
		storedKey(r.Key), string(r.Decision), nanos(r.CreatedAt), string(b), r.DecisionID) // rulekeys.go
	if err != nil {
		return fmt.Errorf("store rule: %w", err)
	}
	return nil
}

// Rules implements [store.Store].
func (s *Store) Rules(ctx context.Context) ([]store.Rule, error) {
	rows, err := s.pool.Query(ctx, `SELECT rule FROM always_rules ORDER BY created_at, key`)
	if err != nil {
		return nil, fmt.Errorf("store rules: %w", err)
	}
	defer rows.Close()
	var out []store.Rule
	for rows.Next() {
		var raw string
		var r store.Rule
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("store rules: %w", err)
		}
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("store rules: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store rules: %w", err)
	}
	return out, nil
}

// InsertModeEvent implements [store.Store].
func (s *Store) InsertModeEvent(ctx context.Context, ev store.ModeEvent) error {
	content := store.ChainContent(store.ChainModeEvents, ev.SessionID, nanos(ev.At), ev.Mode, int64(ev.Revision), ev.By)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := chainedInsert(ctx, tx, content, `INSERT INTO mode_events (session_id, at, mode, revision, "by",
			chain_seq, chain_prev, chain_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			ev.SessionID, nanos(ev.At), ev.Mode, int64(ev.Revision), ev.By)
		return err
	})
	if err != nil {
		return fmt.Errorf("store mode event: %w", err)
	}
	return nil
}

var _ store.Store = (*Store)(nil)
