package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

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
		created_at  INTEGER NOT NULL,
		expires_at  INTEGER NOT NULL DEFAULT 0,
		revoked_at  INTEGER NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at = 0;
	CREATE TABLE votes (
		decision_id      TEXT NOT NULL,
		person           TEXT NOT NULL,
		option_id        TEXT NOT NULL,
		snapshot_sha256  TEXT NOT NULL,
		at               INTEGER NOT NULL,
		PRIMARY KEY (decision_id, person)
	);
	ALTER TABLE decision_events ADD COLUMN person TEXT NOT NULL DEFAULT '';`

// AddToken implements [store.People].
func (s *Store) AddToken(ctx context.Context, t store.Token) error {
	if !t.Role.Valid() {
		return fmt.Errorf("store add token: unknown role %q", t.Role)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tokens WHERE name = ? AND revoked_at = 0`, t.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%w: %s has a token (revoke it first)", store.ErrExists, t.Name)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (sha256, name, role, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			t.SHA256, t.Name, string(t.Role), nanos(t.CreatedAt), optNanos(t.ExpiresAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("store add token: %w", err)
	}
	return nil
}

// Tokens implements [store.People].
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	out := []store.Token{}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT sha256, name, role, created_at, expires_at, revoked_at FROM tokens ORDER BY created_at, name`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanToken(rows)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store tokens: %w", err)
	}
	return out, nil
}

// TokenBySHA256 implements [store.People].
func (s *Store) TokenBySHA256(ctx context.Context, sum string) (store.Token, error) {
	var t store.Token
	err := s.read(func(q querier) (err error) {
		t, err = scanToken(q.QueryRowContext(ctx, `SELECT sha256, name, role, created_at, expires_at, revoked_at FROM tokens WHERE sha256 = ?`, sum))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("%w: no such token", store.ErrNotFound)
	}
	if err != nil {
		return t, fmt.Errorf("store token: %w", err)
	}
	return t, nil
}

// RevokeToken implements [store.People].
func (s *Store) RevokeToken(ctx context.Context, name string, at time.Time) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.w.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at = 0`, nanos(at), name)
	if err != nil {
		return fmt.Errorf("store revoke token: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store revoke token: %w: %s has no token that is not revoked", store.ErrNotFound, name)
	}
	return nil
}

func scanToken(sc scanner) (store.Token, error) {
	var t store.Token
	var role string
	var created, expires, revoked int64
	if err := sc.Scan(&t.SHA256, &t.Name, &role, &created, &expires, &revoked); err != nil {
		return t, err
	}
	t.Role, t.CreatedAt = store.Role(role), fromNanos(created)
	t.ExpiresAt, t.RevokedAt = fromOptNanos(expires), fromOptNanos(revoked)
	return t, nil
}

// CastVote implements [store.Votes]: the insert and the count in one
// write transaction (SQLite's single writer serialises every cast).
func (s *Store) CastVote(ctx context.Context, v store.Vote) (int, error) {
	var n int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		content := store.ChainContent(store.ChainVotes, v.DecisionID, v.Person, v.OptionID, v.SnapshotSHA256, nanos(v.At))
		ok, err := chainedInsert(ctx, tx, content, `INSERT INTO votes (decision_id, person, option_id, snapshot_sha256, at,
			chain_seq, chain_prev, chain_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			v.DecisionID, v.Person, v.OptionID, v.SnapshotSHA256, nanos(v.At))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s", store.ErrDuplicateVote, v.Person)
		}
		return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM votes WHERE decision_id = ? AND option_id = ? AND snapshot_sha256 = ?`,
			v.DecisionID, v.OptionID, v.SnapshotSHA256).Scan(&n)
	})
	if err != nil {
		return 0, fmt.Errorf("store vote: %w", err)
	}
	return n, nil
}

// VotesOf implements [store.Votes].
func (s *Store) VotesOf(ctx context.Context, decisionID string) ([]store.Vote, error) {
	out := []store.Vote{}
	err := s.read(func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT decision_id, person, option_id, snapshot_sha256, at FROM votes
			WHERE decision_id = ? ORDER BY at, person`, decisionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var v store.Vote
			var at int64
			if err := rows.Scan(&v.DecisionID, &v.Person, &v.OptionID, &v.SnapshotSHA256, &at); err != nil {
				return err
			}
			v.At = fromNanos(at)
			out = append(out, v)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store votes: %w", err)
	}
	return out, nil
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
