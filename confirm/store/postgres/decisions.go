package postgres

import (
	"context"
	"encoding/json"
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

// insert writes rec and its events unless the id exists, pipelined in one
// round trip and transaction: the events are guarded to follow only a row
// this transaction inserted (newEvent), and the chain head is taken last.
func (s *Store) insert(ctx context.Context, rec store.Record) (bool, error) {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO decisions
		(id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
		rec.ID, rec.SessionID, rec.AgentKey, s.owner, string(rec.Status),
		nonNil(rec.Request), string(rec.Snapshot), nanos(rec.CreatedAt), nanos(rec.Deadline), rec.BridgeID)
	chain := &chainRows{}
	for _, ev := range rec.Events {
		chain.event("new_event", rec.ID, ev) // queueNewEvent's guard
	}
	tags, err := s.grouped(ctx, rec.ID, b, chain) // group.go
	if err != nil {
		return false, err
	}
	return tags[0].RowsAffected() == 1, nil
}

// Claim implements [store.Store]: the conditional UPDATE, which records
// this instance as the claimer and NOTIFYs the decision's owner (when that
// is another instance) in the same statement with the outcome it writes
// (claimNotice: so the owner need not read it back, [Store.WatchClaims]), and the journal event
// (guarded to follow only a won claim: newEvent), pipelined in one round
// trip and transaction. A concurrent claim of the same row waits for this
// one's row lock, then finds the status no longer open.
func (s *Store) Claim(ctx context.Context, id string, t store.Transition) (bool, error) {
	var opt, text *string
	scope := ""
	if t.Answer != nil {
		opt, text, scope = &t.Answer.OptionID, &t.Answer.Text, t.Answer.Scope
	}
	b := &pgx.Batch{}
	b.Queue(`WITH rows AS (UPDATE decisions SET status = $1, answer_option = $2, answer_text = $3,
		resolved_by = $4, reason = $5, closed_at = $6, resolved_person = $8, claimer = $9, delivered_at = NULL, answer_scope = $11
		WHERE id = $7 AND status = 'open' RETURNING id, owner)
		SELECT CASE WHEN owner <> '' AND owner <> $9 THEN pg_notify(`+channelOf("owner")+`, $10) END FROM rows`,
		string(t.Status), opt, text, t.By, string(t.Reason), nanos(t.At), id, t.Person, s.owner, claimNotice(id, t), scope)
	chain := &chainRows{}
	if t.Event.Seq != 0 {
		chain.event("new_event", id, t.Event) // queueNewEvent's guard
	}
	tags, err := s.grouped(ctx, id, b, chain) // group.go: claims through one instance share a commit
	if err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	return tags[0].RowsAffected() == 1, nil
}

// Append implements [store.Store]: the chained insert of ev, one statement.
// A delivered event also sets delivered_at, in the same transaction; the
// decision's claimer, when another instance, learns of it by reading
// ([Store.Settled]), with no NOTIFY: a NOTIFY's commit wakes every
// listening backend of the database. The write may share its transaction
// with other decisions' writes of this instance (group.go).
func (s *Store) Append(ctx context.Context, id string, ev store.Event) error {
	return s.AppendEvents(ctx, id, []store.Event{ev})
}

// AppendEvents implements [store.EventsAppender]: the statements of Append
// for each event, pipelined in one round trip and transaction.
func (s *Store) AppendEvents(ctx context.Context, id string, evs []store.Event) error {
	if len(evs) == 0 {
		return nil
	}
	b, chain := &pgx.Batch{}, &chainRows{}
	for _, ev := range evs {
		if ev.Type == store.EventDelivered {
			b.Queue(`UPDATE decisions SET delivered_at = COALESCE(delivered_at, $1) WHERE id = $2`, nanos(ev.At), id)
		}
		chain.event("event", id, ev)
	}
	if _, err := s.grouped(ctx, id, b, chain); err != nil { // group.go
		return fmt.Errorf("store append: %w", err)
	}
	return nil
}

var _ store.EventsAppender = (*Store)(nil)

// querier is what reads and single writes need of a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// insertEvent writes ev as the next row of the hash chain (chain.go).
func insertEvent(ctx context.Context, tx querier, id string, ev store.Event) error {
	q, args := eventInsert(id, ev)
	_, err := chainedInsert(ctx, tx, args[len(args)-1].([]byte), q, args[:len(args)-1]...)
	return err
}

// eventInsert returns the chained insert of ev for chainedInsert, and its
// arguments with the chain content last.
func eventInsert(id string, ev store.Event) (string, []any) {
	content := store.ChainContent(store.ChainDecisionEvents, id, int64(ev.Seq), nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person)
	return `INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person,
		chain_seq, chain_prev, chain_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		[]any{id, ev.Seq, nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person, content}
}

// queueNewEvent queues the chained insert of ev, the journal event of a
// decision row this transaction inserted or changed, in b: it inserts
// nothing unless the row's version is this transaction's (xmin), so that a
// pipelined statement before it that lost (a claim of a closed decision,
// an id that exists) journals nothing.
func queueNewEvent(b *pgx.Batch, id string, ev store.Event) {
	content := store.ChainContent(store.ChainDecisionEvents, id, int64(ev.Seq), nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person)
	b.Queue(chainedQuery(`INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person, chain_seq, chain_prev, chain_hash)
		SELECT $1::text, $2::integer, $3::bigint, $4::text, $5::text, $6::text, $7::text, $8, $9, $10
		FROM decisions WHERE id = $1 AND xmin = pg_current_xact_id()::xid ON CONFLICT DO NOTHING`, 7),
		id, ev.Seq, nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person, content)
}

const recordColumns = `id, session_id, agent_key, status, request, snapshot, created_at, deadline, answer_option, answer_text,
	resolved_by, reason, closed_at, delivered_at, bridge_id, resolved_person, answer_scope`

// scanRecord scans recordColumns, then into extra.
func scanRecord(row pgx.Row, extra ...any) (store.Record, error) {
	var (
		r                 store.Record
		status, reason    string
		snap              string
		created, deadline int64
		opt, text         *string
		scope             string
		closed, delivered *int64
	)
	if err := row.Scan(append([]any{&r.ID, &r.SessionID, &r.AgentKey, &status, &r.Request, &snap, &created, &deadline, &opt, &text,
		&r.ResolvedBy, &reason, &closed, &delivered, &r.BridgeID, &r.Person, &scope}, extra...)...); err != nil {
		return r, err
	}
	r.Snapshot = json.RawMessage(snap)
	r.Status, r.Reason = store.Status(status), store.Reason(reason)
	r.CreatedAt, r.Deadline = fromNanos(created), fromNanos(deadline)
	if opt != nil || text != nil {
		r.Answer = &store.Answer{OptionID: deref(opt), Text: deref(text), Scope: scope}
	}
	if closed != nil {
		r.ClosedAt = fromNanos(*closed)
	}
	if delivered != nil {
		r.DeliveredAt = fromNanos(*delivered)
	}
	return r, nil
}

// Get implements [store.Store]: the row and its journal (aggregated as
// JSON) in one statement, so the two agree (one snapshot) and a read is
// one round trip; reads of this instance waiting at once share that
// statement (readgroup.go).
func (s *Store) Get(ctx context.Context, id string) (store.Record, error) {
	return s.groupedGet(ctx, id)
}

// journalColumn selects a decision's journal as one JSON array, in seq
// order (NULL without events), for decodeJournal.
const journalColumn = `(SELECT json_agg(json_build_object('seq', seq, 'at', at, 'type', type, 'host', host,
	'detail', detail, 'person', person) ORDER BY seq) FROM decision_events WHERE decision_id = decisions.id)`

// decodeJournal decodes the journalColumn of a decision.
func decodeJournal(journal []byte) ([]store.Event, error) {
	if journal == nil {
		return nil, nil
	}
	var evs []struct {
		Seq                        int
		At                         int64
		Type, Host, Detail, Person string
	}
	if err := json.Unmarshal(journal, &evs); err != nil {
		return nil, err
	}
	out := make([]store.Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, store.Event{Seq: e.Seq, At: fromNanos(e.At), Type: store.EventType(e.Type),
			Host: e.Host, Detail: e.Detail, Person: e.Person})
	}
	return out, nil
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
