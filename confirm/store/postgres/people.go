package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationPeople is schema version 4: per-person bearer tokens (only
// their SHA-256; at most one unrevoked token per name) and the votes of
// quorum decisions (one per person and decision). Times are nanoseconds,
// 0 for "never".
const migrationPeople = `CREATE TABLE tokens (
		sha256      TEXT PRIMARY KEY,
		name        TEXT NOT NULL,
		role        TEXT NOT NULL CHECK (role IN ('observer','approver','controller','admin')),
		created_at  BIGINT NOT NULL,
		expires_at  BIGINT NOT NULL DEFAULT 0,
		revoked_at  BIGINT NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at = 0;
	CREATE TABLE votes (
		decision_id      TEXT NOT NULL,
		person           TEXT NOT NULL,
		option_id        TEXT NOT NULL,
		snapshot_sha256  TEXT NOT NULL,
		at               BIGINT NOT NULL,
		PRIMARY KEY (decision_id, person)
	);
	ALTER TABLE decision_events ADD COLUMN person TEXT NOT NULL DEFAULT '';`

// voteLock is the high half of the transaction-level advisory lock that
// serialises the votes on one decision (the low half is hashtext of its
// id).
const voteLock int32 = 0x61637076 // "acpv"

// AddToken implements [store.People]. The partial unique index on
// unrevoked names decides between concurrent adds.
func (s *Store) AddToken(ctx context.Context, t store.Token) error {
	if !t.Role.Valid() {
		return fmt.Errorf("store add token: unknown role %q", t.Role)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO tokens (sha256, name, role, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		t.SHA256, t.Name, string(t.Role), nanos(t.CreatedAt), optNanos(t.ExpiresAt))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "tokens_active_name" {
		return fmt.Errorf("store add token: %w: %s has a token (revoke it first)", store.ErrExists, t.Name)
	}
	if err != nil {
		return fmt.Errorf("store add token: %w", err)
	}
	return nil
}

const tokenColumns = `sha256, name, role, created_at, expires_at, revoked_at`

// Tokens implements [store.People].
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at, name`)
	if err != nil {
		return nil, fmt.Errorf("store tokens: %w", err)
	}
	defer rows.Close()
	out := []store.Token{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("store tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// TokenBySHA256 implements [store.People].
func (s *Store) TokenBySHA256(ctx context.Context, sum string) (store.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE sha256 = $1`, sum))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, fmt.Errorf("%w: no such token", store.ErrNotFound)
	}
	if err != nil {
		return t, fmt.Errorf("store token: %w", err)
	}
	return t, nil
}

// RevokeToken implements [store.People].
func (s *Store) RevokeToken(ctx context.Context, name string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at = 0`, nanos(at), name)
	if err != nil {
		return fmt.Errorf("store revoke token: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store revoke token: %w: %s has no token that is not revoked", store.ErrNotFound, name)
	}
	return nil
}

func scanToken(row pgx.Row) (store.Token, error) {
	var t store.Token
	var role string
	var created, expires, revoked int64
	if err := row.Scan(&t.SHA256, &t.Name, &role, &created, &expires, &revoked); err != nil {
		return t, err
	}
	t.Role, t.CreatedAt = store.Role(role), fromNanos(created)
	t.ExpiresAt, t.RevokedAt = fromOptNanos(expires), fromOptNanos(revoked)
	return t, nil
}

// CastVote implements [store.Votes]: under a transaction-level advisory
// lock on the decision, the insert and the count in one transaction, so
// concurrent casts of any process are counted one after the other.
func (s *Store) CastVote(ctx context.Context, v store.Vote) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, voteLock, v.DecisionID); err != nil {
			return err
		}
		content := store.ChainContent(store.ChainVotes, v.DecisionID, v.Person, v.OptionID, v.SnapshotSHA256, nanos(v.At))
		ok, err := chainedInsert(ctx, tx, content, `INSERT INTO votes (decision_id, person, option_id, snapshot_sha256, at,
			chain_seq, chain_prev, chain_hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			v.DecisionID, v.Person, v.OptionID, v.SnapshotSHA256, nanos(v.At))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s", store.ErrDuplicateVote, v.Person)
		}
		return tx.QueryRow(ctx, `SELECT COUNT(*) FROM votes WHERE decision_id = $1 AND option_id = $2 AND snapshot_sha256 = $3`,
			v.DecisionID, v.OptionID, v.SnapshotSHA256).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("store vote: %w", err)
	}
	return n, nil
}

// VotesOf implements [store.Votes].
func (s *Store) VotesOf(ctx context.Context, decisionID string) ([]store.Vote, error) {
	rows, err := s.pool.Query(ctx, `SELECT decision_id, person, option_id, snapshot_sha256, at FROM votes
		WHERE decision_id = $1 ORDER BY at, person`, decisionID)
	if err != nil {
		return nil, fmt.Errorf("store votes: %w", err)
	}
	defer rows.Close()
	out := []store.Vote{}
	for rows.Next() {
		var v store.Vote
		var at int64
		if err := rows.Scan(&v.DecisionID, &v.Person, &v.OptionID, &v.SnapshotSHA256, &at); err != nil {
			return nil, fmt.Errorf("store votes: %w", err)
		}
		v.At = fromNanos(at)
		out = append(out, v)
	}
	return out, rows.Err()
}

func optNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return nanos(t)
}

func fromOptNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return fromNanos(n)
}

var (
	_ store.People = (*Store)(nil)
	_ store.Votes  = (*Store)(nil)
)
