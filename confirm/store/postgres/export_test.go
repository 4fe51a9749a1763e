package postgres

import (
	"context"

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

// RecordsQuery and SettledQuery are the reads of decisions by id.
var RecordsQuery, SettledQuery = recordsQuery, settledQuery

// ReadByIDs runs sql on conn as the store runs its reads by id
// (readByIDs).
func ReadByIDs(ctx context.Context, conn *pgx.Conn, sql string, ids []string) (pgx.Rows, error) {
	return readByIDs(ctx, conn, sql, ids)
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
