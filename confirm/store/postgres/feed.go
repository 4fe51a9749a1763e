package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationFeed is schema version 6: the event feed of GET /v1/events.
// AppendFeed takes feedLock for its transaction, so ids (BIGSERIAL) are
// assigned and committed in the same order: a reader that saw id n has
// seen every id below n. Prune never deletes the newest event.
const migrationFeed = `CREATE TABLE feed_events (
		id          BIGSERIAL PRIMARY KEY,
		at          BIGINT NOT NULL,
		type        TEXT NOT NULL,
		session_id  TEXT NOT NULL DEFAULT '',
		decision_id TEXT NOT NULL DEFAULT '',
		data        TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX feed_events_by_decision ON feed_events (decision_id);
	CREATE INDEX decisions_closed ON decisions (closed_at) WHERE status <> 'open';`

// feedLock is the key of the transaction-level advisory lock that
// serialises appends to the feed.
const feedLock int64 = 0x6163706d75780002 // "acpmux" 2

// AppendFeed implements [store.Feed].
func (s *Store) AppendFeed(ctx context.Context, ev store.FeedEvent) (store.FeedEvent, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, feedLock); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `INSERT INTO feed_events (at, type, session_id, decision_id, data, bridge_id)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, nanos(ev.At), string(ev.Type), ev.SessionID, ev.DecisionID, string(ev.Data), ev.BridgeID).Scan(&ev.ID)
	})
	if err != nil {
		return ev, fmt.Errorf("store feed: %w", err)
	}
	ev.At = ev.At.UTC()
	return ev, nil
}

// FeedAfter implements [store.Feed].
func (s *Store) FeedAfter(ctx context.Context, after int64, limit int) ([]store.FeedEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, at, type, session_id, decision_id, data, bridge_id FROM feed_events
		WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("store feed: %w", err)
	}
	defer rows.Close()
	out := []store.FeedEvent{}
	for rows.Next() {
		var ev store.FeedEvent
		var at int64
		var typ, data string
		if err := rows.Scan(&ev.ID, &at, &typ, &ev.SessionID, &ev.DecisionID, &data, &ev.BridgeID); err != nil {
			return nil, fmt.Errorf("store feed: %w", err)
		}
		ev.At, ev.Type = fromNanos(at), store.FeedType(typ)
		if data != "" {
			ev.Data = json.RawMessage(data)
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store feed: %w", err)
	}
	return out, nil
}

// LastFeedID implements [store.Feed].
func (s *Store) LastFeedID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM feed_events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("store feed: %w", err)
	}
	return id, nil
}

// prunable selects the decisions Prune deletes: closed before $1 and not
// the grant of a stored ALWAYS verdict.
const prunable = `SELECT id FROM decisions WHERE status <> 'open' AND closed_at < $1
	AND id NOT IN (SELECT decision_id FROM always_rules)`

// Prune implements [store.Pruner].
func (s *Store) Prune(ctx context.Context, before time.Time) (store.PruneResult, error) {
	var res store.PruneResult
	b := nanos(before)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, feedLock); err != nil {
			return err
		}
		// The decisions to delete, locked: from here on no write of
		// another session can close one more of them or add a journal row
		// to one (the row's foreign-key check waits for this transaction),
		// so the placeholders recorded below are exactly the chained rows
		// deleted after them. Each statement after takes its own snapshot
		// (READ COMMITTED): a set of decisions chosen again by each would
		// differ from the last when a decision closes in between.
		var ids []string
		rows, err := tx.Query(ctx, prunable+` FOR UPDATE`, b)
		if err == nil {
			ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			return err
		}
		pe, err := pruneChainedEvents(ctx, tx, ids, nanos(time.Now())) // pruned.go
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM feed_events WHERE (decision_id = ANY($2) OR (decision_id = '' AND at < $1))
			AND id < (SELECT MAX(id) FROM feed_events)`, b, ids)
		if err != nil {
			return err
		}
		res.Feed = int(tag.RowsAffected())
		if _, err := tx.Exec(ctx, `DELETE FROM decision_events WHERE decision_id = ANY($1)`, ids); err != nil {
			return err
		}
		// The pruned decisions' notes, and notes whose decision is gone
		// (pruned by a build that left them).
		if _, err := tx.Exec(ctx, `DELETE FROM decision_notes n WHERE n.decision_id = ANY($1)
			OR NOT EXISTS (SELECT 1 FROM decisions d WHERE d.id = n.decision_id)`, ids); err != nil {
			return err
		}
		tag, err = tx.Exec(ctx, `DELETE FROM decisions WHERE id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		res.Decisions = int(tag.RowsAffected())
		if res.Bridges, err = pruneBridges(ctx, tx, b); err != nil {
			return err
		}
		if err := pruneLegacy(ctx, tx, pe.Legacy[store.ChainDecisionEvents]); err != nil || res.Decisions == 0 {
			return err
		}
		return insertPruneEvent(ctx, tx, pe, nanos(time.Now()), b) // pruneevents.go
	})
	if err != nil {
		return store.PruneResult{}, fmt.Errorf("store prune: %w", err)
	}
	return res, nil
}

// pruneBridges deletes the registered bridges whose last heartbeat is
// before (nanoseconds) and that have no decision left (a lookup each in
// decisions_by_bridge_session), and returns how many.
func pruneBridges(ctx context.Context, tx pgx.Tx, before int64) (int, error) {
	tag, err := tx.Exec(ctx, `DELETE FROM bridges b WHERE b.heartbeat < $1
		AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.bridge_id = b.id)`, before)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

var (
	_ store.Feed   = (*Store)(nil)
	_ store.Pruner = (*Store)(nil)
)
