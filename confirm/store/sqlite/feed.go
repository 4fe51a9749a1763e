package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationFeed is schema version 6: the event feed of GET /v1/events.
// An id is the rowid: one more than the largest stored; every write
// transaction starts with BEGIN IMMEDIATE, so ids grow in commit order
// across processes, and Prune never deletes the newest event, so an id is
// never reused.
const migrationFeed = `CREATE TABLE feed_events (
		id          INTEGER PRIMARY KEY,
		at          INTEGER NOT NULL,
		type        TEXT NOT NULL,
		session_id  TEXT NOT NULL DEFAULT '',
		decision_id TEXT NOT NULL DEFAULT '',
		data        TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX feed_events_by_decision ON feed_events (decision_id);
	CREATE INDEX decisions_closed ON decisions (closed_at) WHERE status != 'open';`

// AppendFeed implements [store.Feed].
func (s *Store) AppendFeed(ctx context.Context, ev store.FeedEvent) (store.FeedEvent, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.w.QueryRowContext(ctx, `INSERT INTO feed_events (at, type, session_id, decision_id, data, bridge_id)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, nanos(ev.At), string(ev.Type), ev.SessionID, ev.DecisionID, string(ev.Data), ev.BridgeID).Scan(&ev.ID)
	if err != nil {
		return ev, fmt.Errorf("store feed: %w", err)
	}
	ev.At = ev.At.UTC()
	return ev, nil
}

// FeedAfter implements [store.Feed].
func (s *Store) FeedAfter(ctx context.Context, after int64, limit int) ([]store.FeedEvent, error) {
	out := []store.FeedEvent{}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT id, at, type, session_id, decision_id, data, bridge_id FROM feed_events
			WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ev store.FeedEvent
			var at int64
			var typ, data string
			if err := rows.Scan(&ev.ID, &at, &typ, &ev.SessionID, &ev.DecisionID, &data, &ev.BridgeID); err != nil {
				return err
			}
			ev.At, ev.Type = fromNanos(at), store.FeedType(typ)
			if data != "" {
				ev.Data = json.RawMessage(data)
			}
			out = append(out, ev)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store feed: %w", err)
	}
	return out, nil
}

// LastFeedID implements [store.Feed].
func (s *Store) LastFeedID(ctx context.Context) (int64, error) {
	var id int64
	err := s.read(func(q querier) error {
		return q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM feed_events`).Scan(&id)
	})
	if err != nil {
		return 0, fmt.Errorf("store feed: %w", err)
	}
	return id, nil
}

// prunable selects the decisions Prune deletes: closed before ?1 and not
// the grant of a stored ALWAYS verdict.
const prunable = `SELECT id FROM decisions WHERE status != 'open' AND closed_at < ?1
	AND id NOT IN (SELECT json_extract(rule, '$.decisionId') FROM always_rules WHERE json_valid(rule))`

// pruneFeed deletes the events of prunable decisions and the session
// events before ?1, never the newest event.
const pruneFeed = `DELETE FROM feed_events WHERE (decision_id IN (` + prunable + `) OR (decision_id = '' AND at < ?1))
	AND id < (SELECT MAX(id) FROM feed_events)`

// Prune implements [store.Pruner].
func (s *Store) Prune(ctx context.Context, before time.Time) (store.PruneResult, error) {
	var res store.PruneResult
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("store prune: %w", err)
	}
	defer tx.Rollback()
	b := nanos(before)
	pe, err := pruneChainedEvents(ctx, tx, b) // pruned.go
	if err != nil {
		return res, fmt.Errorf("store prune: %w", err)
	}
	steps := []struct {
		n   *int
		sql string
	}{
		{&res.Feed, pruneFeed},
		{nil, `DELETE FROM decision_events WHERE decision_id IN (` + prunable + `)`},
		{nil, `DELETE FROM decision_notes WHERE decision_id IN (` + prunable + `)
			OR NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = decision_notes.decision_id)`}, // also notes whose decision is gone
		{&res.Decisions, `DELETE FROM decisions WHERE id IN (` + prunable + `)`},
		// Bridges gone since ?1 with no decision left (a lookup each in
		// an index of decisions by bridge).
		{&res.Bridges, `DELETE FROM bridges WHERE heartbeat < ?1
			AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.bridge_id = bridges.id)`},
	}
	for _, st := range steps {
		r, err := tx.ExecContext(ctx, st.sql, b)
		if err != nil {
			return store.PruneResult{}, fmt.Errorf("store prune: %w", err)
		}
		if st.n != nil {
			n, _ := r.RowsAffected()
			*st.n = int(n)
		}
	}
	if res.Decisions > 0 {
		if err := insertPruneEvent(ctx, tx, pe, nanos(time.Now()), b); err != nil {
			return store.PruneResult{}, fmt.Errorf("store prune: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return store.PruneResult{}, fmt.Errorf("store prune: %w", err)
	}
	return res, nil
}

var (
	_ store.Feed   = (*Store)(nil)
	_ store.Pruner = (*Store)(nil)
)
