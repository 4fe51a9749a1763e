package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// SchemaVersion is the schema version this package migrates to.
var SchemaVersion = len(migrations)

// ParseNotice is parseNotice, for the tests of a notification's payload.
var ParseNotice = parseNotice

// SetGroupCommitted sets the hook that sees each group commit
// transaction's size and error and returns the error the group acts on.
func SetGroupCommitted(s *Store, f func(n int, err error) error) { s.group.committed = f }

// QueuedWrites returns how many writes wait for the group commit.
func QueuedWrites(s *Store) int {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	return len(s.group.queue)
}

// SessionsQuery and SessionQuery are SessionsOf's reads: every
// session, and one session's ($1).
var SessionsQuery, SessionQuery = sessionsQuery, sessionQuery

// RecordsQuery and SettledQuery are the reads of decisions by id.
var RecordsQuery, SettledQuery = recordsQuery, settledQuery

// QueryPlanned runs sql on conn as the store runs its reads by id and its
// heartbeat's reads (queryPlanned).
func QueryPlanned(ctx context.Context, conn *pgx.Conn, sql string, args ...any) (pgx.Rows, error) {
	return queryPlanned(ctx, conn, sql, args...)
}

// RecordsOn and SettledOn are the store's batched Get and Settled, on
// conn instead of the store's pool.
func RecordsOn(ctx context.Context, conn *pgx.Conn, ids []string) error {
	_, err := records(ctx, conn, ids)
	return err
}

func SettledOn(ctx context.Context, conn *pgx.Conn, ids []string) error {
	_, err := settled(ctx, conn, ids)
	return err
}

// The heartbeat's reads (unsettled.go).
var UnsettledQuery, LoseOwnersQuery = unsettledQuery, loseOwnersQuery

// UnsettledOn and LoseOwnersOn are the store's Unsettled and LoseOwners'
// sweep, on q (a connection, or a transaction for the sweep) instead of
// the store's pool.
func UnsettledOn(ctx context.Context, q pgx.Tx, bridgeID string) error {
	_, err := unsettled(ctx, q, bridgeID)
	return err
}

func LoseOwnersOn(ctx context.Context, q pgx.Tx, cutoff, at time.Time) error {
	_, err := loseOwnerRows(ctx, q, cutoff, at)
	return err
}
