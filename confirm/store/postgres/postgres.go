package postgres

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/internal/owner"
	"github.com/acpmux/acpmux/internal/warm"
)

// Store is the [store.Store] on a PostgreSQL database, through a pgx
// connection pool. Every write is one statement or one transaction at the
// default isolation (read committed); a claim is UPDATE … WHERE id = $1
// AND status = 'open' with the rows affected checked, so PostgreSQL's row
// lock decides between concurrent claims of any process or machine. Times
// keep nanoseconds. Safe for concurrent use, also by many processes on
// many machines sharing one database.
type Store struct {
	pool      *pgxpool.Pool
	where     string // the URL without its password
	owner     string // this store's owner tag: host/pid/instance
	recovered int
	from      int       // the schema version Open found
	group     grouper   // the group commit of decisions' writes (group.go)
	reads     readGroup // the batched reads of single decisions (readgroup.go)
	lane      laneState // this instance's chain lane (lanes.go)
	// warm runs the leads of the group commit and of the read group and
	// the lone reruns, on goroutines kept for a second after each: their
	// stacks, grown by the driver's encoding, stay grown under load.
	warm *warm.Pool
}

// IsURL reports whether state names a PostgreSQL database: a URL with
// the scheme postgres or postgresql.
func IsURL(state string) bool {
	return strings.HasPrefix(state, "postgres://") || strings.HasPrefix(state, "postgresql://")
}

// Open connects to the PostgreSQL database at rawURL (postgres://… or
// postgresql://…, with libpq's parameters; the password comes from the
// URL, $PGPASSWORD or the file $PGPASSFILE, ~/.pgpass by default, as pgx
// reads them). It applies the pending schema migrations in one
// transaction under an advisory lock (several bridges may start at once),
// and refuses, with an error wrapping [store.ErrSchemaTooNew], a schema
// newer than it knows. It then cancels, with reason bridge_restart, the
// open decisions whose deadline passed or whose process, on this host, is
// gone; open decisions of other hosts are left to their deadline. Errors
// never contain the password. The caller must Close the store.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	where := Redact(rawURL)
	if !IsURL(rawURL) {
		return nil, fmt.Errorf("open store %s: not a postgres:// URL", where)
	}
	pool, err := pgxpool.New(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %s", where, scrub(err.Error(), rawURL))
	}
	s := &Store{pool: pool, where: where, owner: owner.New(), warm: warm.New(time.Second)}
	if err := s.start(ctx); err != nil {
		s.warm.Close()
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	owner.Add(s.owner)
	return s, nil
}

func (s *Store) start(ctx context.Context) (err error) {
	if err := s.pool.Ping(ctx); err != nil {
		return err
	}
	if s.from, err = migrate(ctx, s.pool); err != nil {
		return err
	}
	if err := s.anchorChain(ctx, time.Now().UTC().UnixNano()); err != nil { // pruneevents.go
		return fmt.Errorf("anchor the audit chain: %w", err)
	}
	s.recovered, err = s.cancelLeftOpen(ctx)
	return err
}

// Redact returns rawURL with its password, in the user info or in a
// password parameter, replaced by "xxxxx"; a string that does not parse as
// a URL is replaced whole, so that a password never reaches a log.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// scrub returns msg with the password of rawURL replaced by "xxxxx", or a
// fixed text when rawURL does not parse (its password cannot be found).
func scrub(msg, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "invalid URL"
	}
	pw, _ := u.User.Password()
	for _, p := range []string{pw, u.Query().Get("password")} {
		if p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
			msg = strings.ReplaceAll(msg, url.QueryEscape(p), "xxxxx")
			msg = strings.ReplaceAll(msg, url.PathEscape(p), "xxxxx")
		}
	}
	return msg
}

// Path returns the URL the store was opened with, without its password.
func (s *Store) Path() string { return s.where }

// Recovered returns how many decisions Open found left open and cancelled
// with reason bridge_restart.
func (s *Store) Recovered() int { return s.recovered }

// Durable implements [store.Store]: always true.
func (s *Store) Durable() bool { return true }

// Close closes the pool. Decisions it left open are cancelled by the next
// Open on this host, or end at their deadline.
func (s *Store) Close() error {
	owner.Remove(s.owner)
	s.pool.Close()
	s.warm.Close()
	return nil
}

// cancelLeftOpen closes every left-over open row with reason
// bridge_restart, in one transaction.
func (s *Store) cancelLeftOpen(ctx context.Context) (int, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	now := time.Now().UnixNano()
	ids, err := leftOpen(ctx, tx, now)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		tag, err := tx.Exec(ctx, `UPDATE decisions SET status = 'cancelled', reason = $1, closed_at = $2
			WHERE id = $3 AND status = 'open'`, store.ReasonBridgeRestart, now, id)
		if err != nil {
			return 0, fmt.Errorf("cancel left-open decision: %w", err)
		}
		if tag.RowsAffected() == 0 {
			continue // another bridge closed it meanwhile
		}
		n++
		var last int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM decision_events WHERE decision_id = $1`, id).Scan(&last); err != nil {
			return 0, fmt.Errorf("journal bridge_restart: %w", err)
		}
		ev := store.Event{Seq: last + 1, At: fromNanos(now), Type: store.EventCancelled, Detail: string(store.ReasonBridgeRestart)}
		if err := insertEvent(ctx, tx, id, ev); err != nil {
			return 0, fmt.Errorf("journal bridge_restart: %w", err)
		}
	}
	return n, tx.Commit(ctx)
}

// leftOpen returns the open decisions whose process is gone or whose
// deadline (nanoseconds) passed.
func leftOpen(ctx context.Context, tx pgx.Tx, now int64) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT id, owner, deadline FROM decisions WHERE status = 'open'`)
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
