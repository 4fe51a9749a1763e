package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/internal/owner"
	_ "modernc.org/sqlite" // pure-Go SQLite driver "sqlite"; only this file imports it
)

// Store is the [store.Store] on an SQLite database (modernc.org/sqlite, pure
// Go). A file database runs in WAL mode with busy_timeout 5s and foreign
// keys on; every transaction starts with BEGIN IMMEDIATE, so a claim never
// fails with SQLITE_BUSY on a lock upgrade. Claims commit with
// synchronous=FULL (the WAL is synced: an outcome acknowledged to a host,
// and everything written before it, survives power loss); inserts and
// journal events commit with synchronous=NORMAL (they survive an acpmux
// crash; after power loss the ones since the last claim may be lost). One
// connection does all of this process's writes, so they never wait on each
// other in SQLite; reads use other connections. Safe for concurrent use,
// also by several processes sharing one file.
type Store struct {
	db        *sql.DB
	w         *sql.Conn  // the connection that writes; guarded by wmu
	wmu       sync.Mutex // serialises this process's writes (and all access for MemoryPath)
	memory    bool
	path      string
	owner     string // this store's owner tag: host/pid/instance
	recovered int
}

// DefaultPath returns the default store file:
// $XDG_STATE_HOME/acpmux/state.db, or ~/.local/state/acpmux/state.db when
// XDG_STATE_HOME is unset or not absolute (XDG Base Directory spec). It
// fails only when the home directory is unknown.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "acpmux", "state.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default state path: %w", err)
	}
	return filepath.Join(home, ".local", "state", "acpmux", "state.db"), nil
}

// MemoryPath is the [Open] path for a store that keeps nothing on disk:
// an SQLite database in memory, lost when the process ends (--state :memory:).
const MemoryPath = ":memory:"

// Open opens (creating it and its directory, mode 0700, if needed) the
// SQLite store at path, or an in-memory one for MemoryPath. It applies the
// pending schema migrations (table schema_version), then cancels, with
// reason bridge_restart, every decision a previous process left open: their
// agent requests no longer exist. A decision is left over when the process
// that opened it (recorded as host/pid/instance) is gone: same host and its
// pid is not running, or the same process but a store instance that was
// closed; or when its deadline passed. Decisions of a live acpmux process
// sharing the file are left alone. The caller must Close the store.
func Open(path string) (*Store, error) {
	dsn, err := storeDSN(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if path == MemoryPath {
		db.SetMaxOpenConns(1) // each connection would be a separate database
	} else {
		db.SetMaxOpenConns(4)
	}
	s := &Store{db: db, path: path, owner: owner.New(), memory: path == MemoryPath}
	if s.w, err = db.Conn(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.migrate(); err != nil {
		s.w.Close()
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.anchorChain(context.Background(), time.Now().UTC().UnixNano()); err != nil { // pruneevents.go
		s.w.Close()
		db.Close()
		return nil, fmt.Errorf("open store %s: anchor the audit chain: %w", path, err)
	}
	if s.recovered, err = s.cancelLeftOpen(); err != nil {
		s.w.Close()
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	owner.Add(s.owner)
	return s, nil
}

func storeDSN(path string) (string, error) {
	const common = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate"
	if path == MemoryPath {
		return ":memory:?" + common, nil
	}
	if path == "" {
		return "", errors.New("empty path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	// A new store is readable by its owner only (SQLite gives its -wal and
	// -shm files the database file's mode): it holds every decision's
	// request, commands and paths. An existing file keeps its mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	return fileURI(path, common+"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)") // probe.go
}

// Path returns the path the store was opened with.
func (s *Store) Path() string { return s.path }

// Recovered returns how many decisions Open found open and cancelled
// with reason bridge_restart.
func (s *Store) Recovered() int { return s.recovered }

// Close closes the database. Decisions it left open are cancelled by the
// next Open of the same file.
func (s *Store) Close() error {
	owner.Remove(s.owner)
	s.wmu.Lock()
	s.w.Close()
	s.wmu.Unlock()
	return s.db.Close()
}

// migrations are applied in order; migration i brings the schema to version
// i+1. Never edit a released one: append a new one.
var migrations = []string{
	`CREATE TABLE decisions (
		id             TEXT PRIMARY KEY,
		session_id     TEXT NOT NULL,
		agent_key      TEXT NOT NULL,
		owner          TEXT NOT NULL,
		status         TEXT NOT NULL CHECK (status IN ('open','answered','timed_out','cancelled')),
		request        BLOB NOT NULL,
		snapshot       TEXT NOT NULL,
		created_at     INTEGER NOT NULL,
		deadline       INTEGER NOT NULL,
		answer_option  TEXT,
		answer_text    TEXT,
		resolved_by    TEXT NOT NULL DEFAULT '',
		reason         TEXT NOT NULL DEFAULT '',
		closed_at      INTEGER,
		delivered_at   INTEGER
	);
	CREATE INDEX decisions_by_session ON decisions (session_id, created_at);
	CREATE INDEX decisions_open ON decisions (status) WHERE status = 'open';
	CREATE TABLE decision_events (
		decision_id TEXT NOT NULL REFERENCES decisions (id),
		seq         INTEGER NOT NULL,
		at          INTEGER NOT NULL,
		type        TEXT NOT NULL,
		host        TEXT NOT NULL DEFAULT '',
		detail      TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (decision_id, seq)
	);`,
	migrationGate,        // gate.go
	migrationBridges,     // registry.go
	migrationPeople,      // people.go
	migrationChain,       // chain.go
	migrationFeed,        // feed.go
	migrationPrunedChain, // pruned.go
	migrationShared,      // shared.go
	migrationPruneEvents, // pruneevents.go
	migrationNotes,       // notes.go
	migrationFeedAt,      // feedindex.go
	migrationLanes,       // lanes.go
	migrationFeedBridge,  // feedbridge.go
	migrationAnswerScope, // answerscope.go
	migrationUnsettled,   // unsettled.go
	migrationSessions,    // sessions.go
	migrationStopped,     // stopped.go
}

func (s *Store) migrate() error {
	ctx := context.Background()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	for {
		done, err := s.migrateOne(ctx)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next pending migration in its own transaction and
// reports whether the schema was already current.
func (s *Store) migrateOne(ctx context.Context) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var v int
	err = tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`)
	}
	if err != nil {
		return false, fmt.Errorf("read schema_version: %w", err)
	}
	if v > len(migrations) {
		return false, fmt.Errorf("%w: the database has schema version %d, this acpmux knows up to %d (upgrade acpmux)",
			store.ErrSchemaTooNew, v, len(migrations))
	}
	if v == len(migrations) {
		return true, tx.Commit()
	}
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return false, fmt.Errorf("migration %d: %w", v+1, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1); err != nil {
		return false, err
	}
	return false, tx.Commit()
}

// cancelLeftOpen closes every left-over open row with reason bridge_restart.
func (s *Store) cancelLeftOpen() (int, error) {
	ctx := context.Background()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := time.Now().UTC().UnixNano()
	ids, err := leftOpen(ctx, tx, now)
	if err != nil {
		return 0, err
	}
	for _, id := range ids {
		var last int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM decision_events WHERE decision_id = ?`, id).Scan(&last); err != nil {
			return 0, fmt.Errorf("journal bridge_restart: %w", err)
		}
		ev := store.Event{Seq: last + 1, At: fromNanos(now), Type: store.EventCancelled, Detail: string(store.ReasonBridgeRestart)}
		if err := insertEvent(ctx, tx, id, ev); err != nil {
			return 0, fmt.Errorf("journal bridge_restart: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE decisions SET status = 'cancelled', reason = ?, closed_at = ?
			WHERE id = ? AND status = 'open'`, store.ReasonBridgeRestart, now, id); err != nil {
			return 0, fmt.Errorf("cancel left-open decision: %w", err)
		}
	}
	return len(ids), tx.Commit()
}

// leftOpen returns the open decisions whose process is gone or whose
// deadline (nanoseconds) passed.
func leftOpen(ctx context.Context, tx *sql.Tx, now int64) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, owner, deadline FROM decisions WHERE status = 'open'`)
	if err != nil {
		return nil, fmt.Errorf("find left-open decisions: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id, tag string
		var deadline int64
		if err := rows.Scan(&id, &tag, &deadline); err != nil {
			return nil, err
		}
		if deadline < now || !owner.Alive(tag) {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

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
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO decisions
		(id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		rec.ID, rec.SessionID, rec.AgentKey, s.owner, string(rec.Status),
		rec.Request, string(rec.Snapshot), nanos(rec.CreatedAt), nanos(rec.Deadline), rec.BridgeID)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	for _, ev := range rec.Events {
		if err := insertEvent(ctx, tx, rec.ID, ev); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}

// Claim implements [store.Store]: one BEGIN IMMEDIATE transaction with the
// conditional UPDATE and the journal event.
func (s *Store) Claim(ctx context.Context, id string, t store.Transition) (bool, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.w.ExecContext(ctx, `PRAGMA synchronous = FULL`); err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	defer s.w.ExecContext(context.WithoutCancel(ctx), `PRAGMA synchronous = NORMAL`)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	defer tx.Rollback()
	var opt, text any
	scope := ""
	if t.Answer != nil {
		opt, text, scope = t.Answer.OptionID, t.Answer.Text, t.Answer.Scope
	}
	res, err := tx.ExecContext(ctx, `UPDATE decisions SET status = ?, answer_option = ?, answer_text = ?, answer_scope = ?,
		resolved_by = ?, reason = ?, closed_at = ?, resolved_person = ?, delivered_at = NULL WHERE id = ? AND status = 'open'`,
		string(t.Status), opt, text, scope, t.By, string(t.Reason), nanos(t.At), t.Person, id)
	if err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	if err := claimEvent(ctx, tx, id, t.Event); err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store claim: %w", err)
	}
	return true, nil
}

// Append implements [store.Store].
func (s *Store) Append(ctx context.Context, id string, ev store.Event) error {
	return s.AppendEvents(ctx, id, []store.Event{ev})
}

// AppendEvents implements [store.EventsAppender]: Append of each event in
// one transaction.
func (s *Store) AppendEvents(ctx context.Context, id string, evs []store.Event) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store append: %w", err)
	}
	defer tx.Rollback()
	for _, ev := range evs {
		if err := insertEvent(ctx, tx, id, ev); err != nil {
			return fmt.Errorf("store append: %w", err)
		}
		if ev.Type != store.EventDelivered {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE decisions SET delivered_at = COALESCE(delivered_at, ?) WHERE id = ?`,
			nanos(ev.At), id); err != nil {
			return fmt.Errorf("store append: %w", err)
		}
	}
	return tx.Commit()
}

var _ store.EventsAppender = (*Store)(nil)

// insertEvent writes ev as the next row of the hash chain (chain.go).
func insertEvent(ctx context.Context, tx *sql.Tx, id string, ev store.Event) error {
	content := store.ChainContent(store.ChainDecisionEvents, id, int64(ev.Seq), nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person)
	_, err := chainedInsert(ctx, tx, content, `INSERT INTO decision_events (decision_id, seq, at, type, host, detail, person,
		chain_seq, chain_prev, chain_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		id, ev.Seq, nanos(ev.At), string(ev.Type), ev.Host, ev.Detail, ev.Person)
	return err
}

const recordColumns = `id, session_id, agent_key, status, request, snapshot, created_at, deadline, answer_option, answer_text,
	resolved_by, reason, closed_at, delivered_at, bridge_id, resolved_person, answer_scope`

type scanner interface{ Scan(dest ...any) error }

func scanRecord(sc scanner) (store.Record, error) {
	var (
		r                   store.Record
		status, reason      string
		sessionID, agentKey string
		snap                string
		req                 []byte
		created, deadline   int64
		opt, text           sql.NullString
		scope               string
		closed, delivered   sql.NullInt64
	)
	if err := sc.Scan(&r.ID, &sessionID, &agentKey, &status, &req, &snap, &created, &deadline, &opt, &text,
		&r.ResolvedBy, &reason, &closed, &delivered, &r.BridgeID, &r.Person, &scope); err != nil {
		return r, err
	}
	r.SessionID, r.AgentKey = sessionID, agentKey
	r.Snapshot, r.Request = json.RawMessage(snap), req
	r.Status, r.Reason = store.Status(status), store.Reason(reason)
	r.CreatedAt, r.Deadline = fromNanos(created), fromNanos(deadline)
	if opt.Valid || text.Valid {
		r.Answer = &store.Answer{OptionID: opt.String, Text: text.String, Scope: scope}
	}
	if closed.Valid {
		r.ClosedAt = fromNanos(closed.Int64)
	}
	if delivered.Valid {
		r.DeliveredAt = fromNanos(delivered.Int64)
	}
	return r, nil
}

// querier is what reads need of *sql.DB and *sql.Conn.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// read runs fn on the reading connections, or on the one connection of an
// in-memory store.
func (s *Store) read(fn func(q querier) error) error {
	if s.memory {
		s.wmu.Lock()
		defer s.wmu.Unlock()
		return fn(s.w)
	}
	return fn(s.db)
}

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, id string) (store.Record, error) {
	var r store.Record
	err := s.read(func(q querier) (err error) {
		r, err = getRecord(ctx, q, id)
		return err
	})
	return r, err
}

func getRecord(ctx context.Context, q querier, id string) (store.Record, error) {
	row := q.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM decisions WHERE id = ?`, id)
	r, err := scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: %s", store.ErrNotFound, id)
	}
	if err != nil {
		return r, fmt.Errorf("store get: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT seq, at, type, host, detail, person FROM decision_events
		WHERE decision_id = ? ORDER BY seq`, id)
	if err != nil {
		return r, fmt.Errorf("store get: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ev store.Event
		var at int64
		var typ string
		if err := rows.Scan(&ev.Seq, &at, &typ, &ev.Host, &ev.Detail, &ev.Person); err != nil {
			return r, fmt.Errorf("store get: %w", err)
		}
		ev.At, ev.Type = fromNanos(at), store.EventType(typ)
		r.Events = append(r.Events, ev)
	}
	return r, rows.Err()
}

// List implements [store.Store].
func (s *Store) List(ctx context.Context, sessionID string, limit int) ([]store.Record, error) {
	var out []store.Record
	err := s.read(func(q querier) (err error) {
		out, err = listRecords(ctx, q, sessionID, limit)
		return err
	})
	return out, err
}

func listRecords(ctx context.Context, q querier, sessionID string, limit int) ([]store.Record, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+recordColumns+` FROM decisions
		WHERE session_id = ? ORDER BY created_at DESC, id LIMIT ?`, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("store list: %w", err)
	}
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("store list: %w", err)
		}
		out = append(out, r)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, rows.Err()
}

func nanos(t time.Time) int64 { return t.UTC().UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
