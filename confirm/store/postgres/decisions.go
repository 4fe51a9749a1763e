package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acpmux/acpmux/confirm/store"
)

// Insert implements [store.Store].
func (s *Store) Insert(ctx context.Context, rec store.Record) (store.Record, bool, error) {
	created, err := s.insert(ctx, rec)
	if err != nil {
		return store.Record{}, false, fmt.Errorf("store insert: %w", err)
	}
	if !created {
		got, err := s.Get(ctx, rec.ID)
		return got, false, err
	}
	return rec, true, nil
}

// insert writes rec and its events unless the id exists.
func (s *Store) insert(ctx context.Context, rec store.Record) (bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	tag, err := tx.Exec(ctx, `INSERT INTO decisions
		(id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
		rec.ID, rec.SessionID, rec.AgentKey, s.owner, string(rec.Status),
		nonNil(rec.Request), string(rec.Snapshot), nanos(rec.CreatedAt), nanos(rec.Deadline), rec.BridgeID)
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	for _, ev := range rec.Events {
		if err := insertEvent(ctx, tx, rec.ID, ev); err != nil {
			return false, err
		}
	}
	return true, tx.Commit(ctx)
}

// Claim implements [store.Store]: one transaction with the conditional
// UPDATE and the journal event. A concurrent claim of the same row waits
// for this one's row lock, then finds the status no longer open.
func (s *Store) Claim(ctx context.Context, id string, t store.Transition) (bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	defer tx.Rollback(ctx)
	var opt, text *string
	if t.Answer != nil {
		opt, text = &t.Answer.OptionID, &t.Answer.Text
	}
	tag, err := tx.Exec(ctx, `UPDATE decisions SET status = $1, answer_option = $2, answer_text = $3,
		resolved_by = $4, reason = $5, closed_at = $6, resolved_person = $8 WHERE id = $7 AND status = 'open'`,
		string(t.Status), opt, text, t.By, string(t.Reason), nanos(t.At), id, t.Person)
	if err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return false, nil
	}
	if err := claimEvent(ctx, tx, id, t.Event); err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	return true, nil
}

// Append implements [store.Store].
func (s *Store) Append(ctx context.Context, id string, ev store.Event) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store append: %w", err)
	}
	defer tx.Rollback(ctx)
	if err := insertEvent(ctx, tx, id, ev); err != nil {
		return fmt.Errorf("store append: %w", err)
	}
	if ev.Type != store.EventDelivered {
		return tx.Commit(ctx)
	}
	if _, err := tx.Exec(ctx, `UPDATE decisions SET delivered_at = COALESCE(delivered_at, $1) WHERE id = $2`,
		nanos(ev.At), id); err != nil {
		return fmt.Errorf("store append: %w", err)
	}
	if err := notifyDelivered(ctx, tx, id); err != nil { // shared.go
		return fmt.Errorf("store append: %w", err)
	}
	return tx.Commit(ctx)
}

// querier is what reads and single writes need of a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// insertEvent writes ev as the next row of the hash chain (chain.go).
func insertEvent(ctx context.Context, tx pgx.Tx, id string, ev store.Event) error {
	content := store.ChainContent(store.ChainDecisionEvents, id, int64(ev.Seq), nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person)
	_, err := chainedInsert(ctx, tx, content, `INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person,
		chain_seq, chain_prev, chain_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		id, ev.Seq, nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person)
	return err
}

const recordColumns = `id, session_id, agent_key, status, request, snapshot, created_at, deadline, answer_option, answer_text,
	resolved_by, reason, closed_at, delivered_at, bridge_id, resolved_person`

func scanRecord(row pgx.Row) (store.Record, error) {
	var (
		r                 store.Record
		status, reason    string
		snap              string
		created, deadline int64
		opt, text         *string
		closed, delivered *int64
	)
	if err := row.Scan(&r.ID, &r.SessionID, &r.AgentKey, &status, &r.Request, &snap, &created, &deadline, &opt, &text,
		&r.ResolvedBy, &reason, &closed, &delivered, &r.BridgeID, &r.Person); err != nil {
		return r, err
	}
	r.Snapshot = json.RawMessage(snap)
	r.Status, r.Reason = store.Status(status), store.Reason(reason)
	r.CreatedAt, r.Deadline = fromNanos(created), fromNanos(deadline)
	if opt != nil || text != nil {
		r.Answer = &store.Answer{OptionID: deref(opt), Text: deref(text)}
	}
	if closed != nil {
		r.ClosedAt = fromNanos(*closed)
	}
	if delivered != nil {
		r.DeliveredAt = fromNanos(*delivered)
	}
	return r, nil
}

// Get implements [store.Store]: the row and its journal in one
// repeatable-read transaction, so the two agree.
func (s *Store) Get(ctx context.Context, id string) (store.Record, error) {
	var r store.Record
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) (err error) {
			r, err = getRecord(ctx, tx, id)
			return err
		})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Record{}, fmt.Errorf("%w: %s", store.ErrNotFound, id)
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("store get: %w", err)
	}
	return r, nil
}

func getRecord(ctx context.Context, tx pgx.Tx, id string) (store.Record, error) {
	r, err := scanRecord(tx.QueryRow(ctx, `SELECT `+recordColumns+` FROM decisions WHERE id = $1`, id))
	if err != nil {
		return r, err
	}
	rows, err := tx.Query(ctx, `SELECT seq, at, type, host, detail, person FROM decision_events
		WHERE decision_id = $1 ORDER BY seq`, id)
	if err != nil {
		return r, err
	}
	defer rows.Close()
	for rows.Next() {
		var ev store.Event
		var at int64
		var typ string
		if err := rows.Scan(&ev.Seq, &at, &typ, &ev.Host, &ev.Detail, &ev.Person); err != nil {
			return r, err
		}
		ev.At, ev.Type = fromNanos(at), store.EventType(typ)
		r.Events = append(r.Events, ev)
	}
	return r, rows.Err()
}

// List implements [store.Store].
func (s *Store) List(ctx context.Context, sessionID string, limit int) ([]store.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recordColumns+` FROM (SELECT * FROM decisions
		WHERE session_id = $1 ORDER BY created_at DESC, id LIMIT $2) AS newest ORDER BY created_at, id`, sessionID, limit)
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store list: %w", err)
	}
	return out, nil
}

func nanos(t time.Time) int64 { return t.UTC().UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// nonNil keeps an empty request from being written as NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
