package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// getRead is one Get waiting for the read group.
type getRead struct {
	id   string
	rec  store.Record
	err  error
	done chan struct{}
}

// readGroup batches an instance's reads of single decisions: while one
// read is in flight, later ones queue, and the next statement reads them
// all (recordsQuery), as an inbox answering for many bridges reads each
// decision it answers. A read queued after a write returned starts after
// it, so it sees it.
type readGroup struct {
	mu      sync.Mutex // guards queue and running
	queue   []*getRead
	running bool
}

// groupedGet is Get through the read group; it returns early with ctx's
// error when ctx ends first.
func (s *Store) groupedGet(ctx context.Context, id string) (store.Record, error) {
	if !storableID(id) {
		// No stored id is one, and one in the batch's array would fail
		// every read of the batch.
		return store.Record{}, fmt.Errorf("%w: %q", store.ErrNotFound, id)
	}
	r := &getRead{id: id, done: make(chan struct{})}
	g := &s.reads
	g.mu.Lock()
	g.queue = append(g.queue, r)
	lead := !g.running
	g.running = true
	g.mu.Unlock()
	if lead {
		ctx := context.WithoutCancel(ctx)
		s.warm.Go(func() { s.runReads(ctx) })
	}
	select {
	case <-r.done:
		return r.rec, r.err
	case <-ctx.Done():
		return store.Record{}, fmt.Errorf("store get: %w", context.Cause(ctx))
	}
}

// runReads reads the queued decisions, a statement per batch, until the
// queue is empty.
func (s *Store) runReads(ctx context.Context) {
	g := &s.reads
	for {
		g.mu.Lock()
		batch := g.queue
		g.queue = nil
		if len(batch) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		s.readBatch(ctx, batch)
	}
}

// readBatch reads every decision of batch in one statement.
func (s *Store) readBatch(ctx context.Context, batch []*getRead) {
	defer func() {
		for _, r := range batch {
			close(r.done)
		}
	}()
	ids := make([]string, 0, len(batch))
	for _, r := range batch {
		ids = append(ids, r.id)
	}
	recs, err := records(ctx, s.pool, ids)
	for _, r := range batch {
		switch rec, ok := recs[r.id]; {
		case err != nil:
			r.err = fmt.Errorf("store get: %w", err)
		case !ok:
			r.err = fmt.Errorf("%w: %s", store.ErrNotFound, r.id)
		default:
			r.rec = rec
		}
	}
}

// storableID reports whether PostgreSQL's text can hold id: valid UTF-8
// (the database's encoding, UTF8) without a NUL. A read naming another
// id finds nothing, and in an array parameter it fails the statement
// (SQLSTATE 22021).
func storableID(id string) bool {
	return utf8.ValidString(id) && strings.IndexByte(id, 0) < 0
}

// recordsQuery reads the decisions of the ids $1 with their journals.
// It runs as an unnamed statement (queryPlanned).
const recordsQuery = `SELECT ` + recordColumns + `, ` + journalColumn + ` FROM decisions WHERE id = ANY($1)`

// queryPlanned runs sql with args on q as an unnamed statement
// (pgx.QueryExecModeExec): planned at each run for those arguments and
// the table as it is then. The store runs so its reads of decisions by id
// and its heartbeat's reads (unsettled.go). As a named prepared
// statement (pgx's statement cache) each got, after five runs, one
// generic plan for the connection's life, made for the table as the
// planner saw it then: while the table was new and small, or last
// analyzed small, that plan scanned the whole table and kept scanning it
// as the table grew, until autovacuum's next ANALYZE (docs/performance.md,
// "What changed on 2026-12-03").
func queryPlanned(ctx context.Context, q querier, sql string, args ...any) (pgx.Rows, error) {
	return q.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
}

// records reads the decisions of ids with their journals on q, by id.
func records(ctx context.Context, q querier, ids []string) (map[string]store.Record, error) {
	rows, err := queryPlanned(ctx, q, recordsQuery, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]store.Record, len(ids))
	for rows.Next() {
		var journal []byte
		r, err := scanRecord(rows, &journal)
		if err == nil {
			r.Events, err = decodeJournal(journal)
		}
		if err != nil {
			return nil, err
		}
		out[r.ID] = r
	}
	return out, rows.Err()
}
