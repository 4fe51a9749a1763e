package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationShared keys decisions by bridge (appended last in migrations).
// migrationSessions (sessions.go) replaced its index.
const migrationShared = `ALTER TABLE decisions ADD COLUMN bridge_id TEXT NOT NULL DEFAULT '';
	CREATE INDEX decisions_by_bridge ON decisions (bridge_id, status);`

// SessionsOf implements [store.Shared]: the whole list is an index-only
// scan of decisions_by_bridge_session (sessions.go), one session's rows
// come through decisions_by_session. Both are planned at each run
// (queryPlanned), as the heartbeat's reads: a cached plan made while the
// table was small would scan it once it grew.
func (s *Store) SessionsOf(ctx context.Context, sessionID string) ([]store.SessionRow, error) {
	query, args := sessionsQuery, []any(nil)
	if sessionID != "" {
		query, args = sessionQuery, []any{sessionID}
	}
	rows, err := queryPlanned(ctx, s.pool, query, args...) // readgroup.go
	if err != nil {
		return nil, fmt.Errorf("store sessions: %w", err)
	}
	defer rows.Close()
	out := []store.SessionRow{}
	for rows.Next() {
		var r store.SessionRow
		var open, all, last int64
		if err := rows.Scan(&r.BridgeID, &r.SessionID, &open, &all, &last); err != nil {
			return nil, fmt.Errorf("store sessions: %w", err)
		}
		r.OpenDecisions, r.Decisions, r.LastActivity = int(open), int(all), fromNanos(last)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ListOf implements [store.Shared]. One bridge's decisions are read from
// decisions_by_bridge_session (sessions.go), newest first, so that the
// newest (the session list's cwd) is a short read whatever the session
// holds; planned at each run, as SessionsOf.
func (s *Store) ListOf(ctx context.Context, bridgeID, sessionID string, limit int) ([]store.Record, error) {
	cond, args := `session_id = $1`, []any{sessionID, limit}
	if bridgeID != "" {
		cond, args = `bridge_id = $3 AND session_id = $1`, append(args, bridgeID)
	}
	rows, err := queryPlanned(ctx, s.pool, `SELECT `+recordColumns+` FROM (SELECT * FROM decisions
		WHERE `+cond+` ORDER BY created_at DESC, id LIMIT $2) AS newest
		ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store list: %w", err)
	}
	defer rows.Close()
	out := []store.Record{}
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("store list: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// NewestOf implements [store.NewestReader]: one query, a lookup in
// decisions_by_bridge_session per pair, planned at each run.
func (s *Store) NewestOf(ctx context.Context, pairs []store.SessionPair) (map[store.SessionPair]store.Record, error) {
	out := make(map[store.SessionPair]store.Record, len(pairs))
	if len(pairs) == 0 {
		return out, nil
	}
	bridges, sessions := make([]string, len(pairs)), make([]string, len(pairs))
	for i, p := range pairs {
		bridges[i], sessions[i] = p.BridgeID, p.SessionID
	}
	rows, err := queryPlanned(ctx, s.pool, `SELECT `+recordColumns+` FROM unnest($1::text[], $2::text[]) AS k(k_bridge, k_session)
		CROSS JOIN LATERAL (SELECT * FROM decisions WHERE bridge_id = k.k_bridge AND session_id = k.k_session
			ORDER BY created_at DESC, id LIMIT 1) AS newest`, bridges, sessions) // readgroup.go
	if err != nil {
		return nil, fmt.Errorf("store newest: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("store newest: %w", err)
		}
		out[store.SessionPair{BridgeID: r.BridgeID, SessionID: r.SessionID}] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store newest: %w", err)
	}
	return out, nil
}

var _ store.NewestReader = (*Store)(nil)

// Unsettled implements [store.Shared].
func (s *Store) Unsettled(ctx context.Context, bridgeID string) ([]string, error) {
	return unsettled(ctx, s.pool, bridgeID)
}

// unsettled is Unsettled on q.
func unsettled(ctx context.Context, q querier, bridgeID string) ([]string, error) {
	rows, err := queryPlanned(ctx, q, unsettledQuery, bridgeID) // unsettled.go
	if err != nil {
		return nil, fmt.Errorf("store unsettled: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store unsettled: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Reclose implements [store.Shared]: the conditional UPDATE and the
// journal event (guarded to follow only a row it changed), pipelined in one
// round trip and transaction. The claimer whose answer is refused learns
// of it by reading ([Store.Settled]), with no NOTIFY.
func (s *Store) Reclose(ctx context.Context, id string, t store.Transition) (bool, error) {
	b := &pgx.Batch{}
	b.Queue(`UPDATE decisions SET status = $1, reason = $2, closed_at = $3
		WHERE id = $4 AND status = 'answered' AND delivered_at IS NULL`,
		string(t.Status), string(t.Reason), nanos(t.At), id)
	if t.Event.Seq != 0 {
		queueNewEvent(b, id, t.Event) // decisions.go
	}
	tags, err := s.pipelinedTags(ctx, b)
	if err != nil {
		return false, fmt.Errorf("store reclose: %w", err)
	}
	return tags[0].RowsAffected() == 1, nil
}

// LoseOwners implements [store.Shared]: one transaction; the rows are
// locked by the UPDATE, so a concurrent claim either wins first or finds
// them closed.
func (s *Store) LoseOwners(ctx context.Context, cutoff, at time.Time, audit func(store.Record) (store.PlanItem, bool)) ([]string, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("store lose owners: %w", err)
	}
	defer tx.Rollback(ctx)
	// Open decisions, and answers another process claimed that the owner
	// never took (claimed before the cutoff too, not delivered): the agent
	// that asked is gone, so the claim is void and never reads as an
	// approval.
	ids, err := loseOwnerRows(ctx, tx, cutoff, at)
	if err != nil {
		return nil, fmt.Errorf("store lose owners: %w", err)
	}
	for _, id := range ids {
		var last int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM decision_events WHERE decision_id = $1`, id).Scan(&last); err != nil {
			return nil, fmt.Errorf("store lose owners: %w", err)
		}
		ev := store.Event{Seq: last + 1, At: at.UTC(), Type: store.EventCancelled, Detail: string(store.ReasonOwnerLost)}
		if err := s.notifyOwner(ctx, tx, id, id); err != nil { // watchchannels.go
			return nil, fmt.Errorf("store lose owners: %w", err)
		}
		if err := insertEvent(ctx, tx, id, ev); err != nil { // the hash chain (chain.go)
			return nil, fmt.Errorf("store lose owners: %w", err)
		}
		if audit == nil {
			continue
		}
		rec, err := scanRecord(tx.QueryRow(ctx, `SELECT `+recordColumns+` FROM decisions WHERE id = $1`, id))
		if err != nil {
			return nil, fmt.Errorf("store lose owners: %w", err)
		}
		if it, ok := audit(rec); ok {
			if err := insertPlanItem(ctx, tx, it); err != nil { // gate.go: on the main chain, as the event
				return nil, fmt.Errorf("store lose owners: %w", err)
			}
		}
	}
	return ids, tx.Commit(ctx)
}

// loseOwnerRows runs LoseOwners' sweep (loseOwnersQuery) on q and
// returns the ids of the decisions it closed.
func loseOwnerRows(ctx context.Context, q querier, cutoff, at time.Time) ([]string, error) {
	rows, err := queryPlanned(ctx, q, loseOwnersQuery, store.ReasonOwnerLost, nanos(at), nanos(cutoff)) // unsettled.go
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Watch implements [store.Shared]: LISTEN, on a connection of the pool
// held for the watch, on this instance's own channel (watchchannels.go).
// A claim, a lost owner or a note NOTIFYs the channel of the instance that
// opened the decision (decisions.owner); so each change wakes the one
// process it concerns, whatever the number of bridges. A delivery or
// reclose NOTIFYs nobody: the instance that won the claim reads it
// ([Store.Settled]), so an instance that owns no decisions need not
// watch at all.
func (s *Store) Watch(ctx context.Context, changed func(id string)) error {
	return s.WatchClaims(ctx, func(id string, _ *store.Record) { changed(id) })
}

// WatchClaims implements [store.ClaimWatcher]: [Store.Watch], passing the
// outcome a claim's NOTIFY carries (claimpayload.go).
func (s *Store) WatchClaims(ctx context.Context, changed func(id string, claimed *store.Record)) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("store watch: %w", err)
	}
	defer func() { // closed, not returned to the pool still listening
		c.Conn().Close(context.WithoutCancel(ctx))
		c.Release()
	}()
	ch, err := s.listenChannel(ctx, c)
	if err != nil {
		return fmt.Errorf("store watch: %w", err)
	}
	if _, err := c.Exec(ctx, `LISTEN `+pgx.Identifier{ch}.Sanitize()); err != nil {
		return fmt.Errorf("store watch: %w", err)
	}
	for {
		n, err := c.Conn().WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("store watch: %w", err)
		}
		changed(parseNotice(n.Payload))
	}
}

var (
	_ store.Shared       = (*Store)(nil)
	_ store.ClaimWatcher = (*Store)(nil)
)
