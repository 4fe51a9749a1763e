package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationShared keys decisions by bridge (appended last in migrations).
const migrationShared = `ALTER TABLE decisions ADD COLUMN bridge_id TEXT NOT NULL DEFAULT '';
	CREATE INDEX decisions_by_bridge ON decisions (bridge_id, status);`

// claimEvent journals the terminal event of a claim, unless its Seq is 0
// (see [store.Store.Claim]).
func claimEvent(ctx context.Context, tx *sql.Tx, id string, ev store.Event) error {
	if ev.Seq == 0 {
		return nil
	}
	return insertEvent(ctx, tx, id, ev)
}

// SessionsOf implements [store.Shared]: the whole list is a scan of the
// covering index decisions_by_bridge_session (sessions.go), one session's
// rows come through decisions_by_session.
func (s *Store) SessionsOf(ctx context.Context, sessionID string) ([]store.SessionRow, error) {
	out := []store.SessionRow{}
	query, args := sessionsQuery, []any(nil)
	if sessionID != "" {
		query, args = sessionQuery, []any{sessionID}
	}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r store.SessionRow
			var last int64
			if err := rows.Scan(&r.BridgeID, &r.SessionID, &r.OpenDecisions, &r.Decisions, &last); err != nil {
				return err
			}
			r.LastActivity = fromNanos(last)
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store sessions: %w", err)
	}
	return out, nil
}

// ListOf implements [store.Shared]. One bridge's decisions are read from
// decisions_by_bridge_session (sessions.go), newest first, so that the
// newest (the session list's cwd) is a short read whatever the session
// holds.
func (s *Store) ListOf(ctx context.Context, bridgeID, sessionID string, limit int) ([]store.Record, error) {
	var out []store.Record
	cond, args := `session_id = ?1`, []any{sessionID, limit}
	if bridgeID != "" {
		cond, args = `bridge_id = ?3 AND session_id = ?1`, append(args, bridgeID)
	}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT `+recordColumns+` FROM decisions
			WHERE `+cond+` ORDER BY created_at DESC, id LIMIT ?2`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRecord(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store list: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// NewestOf implements [store.NewestReader]: a lookup in
// decisions_by_bridge_session per pair (a file has no round trips to
// save).
func (s *Store) NewestOf(ctx context.Context, pairs []store.SessionPair) (map[store.SessionPair]store.Record, error) {
	out := make(map[store.SessionPair]store.Record, len(pairs))
	err := s.read(func(q querier) error {
		for _, p := range pairs {
			rows, err := q.QueryContext(ctx, `SELECT `+recordColumns+` FROM decisions
				WHERE bridge_id = ?1 AND session_id = ?2 ORDER BY created_at DESC, id LIMIT 1`, p.BridgeID, p.SessionID)
			if err != nil {
				return err
			}
			for rows.Next() {
				r, err := scanRecord(rows)
				if err != nil {
					rows.Close()
					return err
				}
				out[p] = r
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store newest: %w", err)
	}
	return out, nil
}

var _ store.NewestReader = (*Store)(nil)

// Unsettled implements [store.Shared].
func (s *Store) Unsettled(ctx context.Context, bridgeID string) ([]string, error) {
	var ids []string
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, unsettledQuery, bridgeID) // unsettled.go
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store unsettled: %w", err)
	}
	return ids, nil
}

// Reclose implements [store.Shared].
func (s *Store) Reclose(ctx context.Context, id string, t store.Transition) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store reclose: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE decisions SET status = ?, reason = ?, closed_at = ?
		WHERE id = ? AND status = 'answered' AND delivered_at IS NULL`, string(t.Status), string(t.Reason), nanos(t.At), id)
	if err != nil {
		return false, fmt.Errorf("store reclose: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	if err := claimEvent(ctx, tx, id, t.Event); err != nil {
		return false, fmt.Errorf("store reclose: %w", err)
	}
	return true, tx.Commit()
}

// LoseOwners implements [store.Shared].
func (s *Store) LoseOwners(ctx context.Context, cutoff, at time.Time, audit func(store.Record) (store.PlanItem, bool)) ([]string, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store lose owners: %w", err)
	}
	defer tx.Rollback()
	// Open decisions, and answers another process claimed that the owner
	// never took (claimed before the cutoff too, not delivered): the agent
	// that asked is gone, so the claim is void and never reads as an
	// approval.
	rows, err := tx.QueryContext(ctx, loseOwnersQuery, nanos(cutoff)) // unsettled.go
	if err != nil {
		return nil, fmt.Errorf("store lose owners: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		if err := loseOwner(ctx, tx, id, nanos(at)); err != nil {
			return nil, fmt.Errorf("store lose owners: %w", err)
		}
		if audit == nil {
			continue
		}
		rec, err := getRecord(ctx, tx, id)
		if err != nil {
			return nil, fmt.Errorf("store lose owners: %w", err)
		}
		if it, ok := audit(rec); ok {
			if err := insertPlanItem(ctx, tx, it); err != nil { // gate.go
				return nil, fmt.Errorf("store lose owners: %w", err)
			}
		}
	}
	return ids, tx.Commit()
}

func loseOwner(ctx context.Context, tx *sql.Tx, id string, at int64) error {
	var last int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM decision_events WHERE decision_id = ?`, id).Scan(&last); err != nil {
		return err
	}
	ev := store.Event{Seq: last + 1, At: fromNanos(at), Type: store.EventCancelled, Detail: string(store.ReasonOwnerLost)}
	if err := insertEvent(ctx, tx, id, ev); err != nil { // the hash chain (chain.go)
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE decisions SET status = 'cancelled', reason = ?, closed_at = ?,
			answer_option = NULL, answer_text = NULL, answer_scope = ''
		WHERE id = ? AND (status = 'open' OR (status = 'answered' AND delivered_at IS NULL))`, store.ReasonOwnerLost, at, id)
	return err
}

// Watch implements [store.Shared]: PRAGMA data_version, on a connection of
// its own, every [store.WatchInterval]; it changes when another connection
// (this process's writer, or another process) committed. An in-memory
// store has no other process: Watch only waits for ctx.
func (s *Store) Watch(ctx context.Context, changed func(id string)) error {
	if s.memory {
		<-ctx.Done()
		return nil
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store watch: %w", err)
	}
	defer c.Close()
	var last int64 = -1
	t := time.NewTicker(store.WatchInterval)
	defer t.Stop()
	for {
		var v int64
		if err := c.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("store watch: %w", err)
		}
		if last >= 0 && v != last {
			changed("")
		}
		last = v
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

var _ store.Shared = (*Store)(nil)
