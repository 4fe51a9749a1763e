package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// IsStore reports whether the database at rawURL holds an acpmux store
// (its schema_version table), without creating or changing anything.
// Errors never contain the password.
func IsStore(ctx context.Context, rawURL string) (bool, error) {
	where := Redact(rawURL)
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		return false, fmt.Errorf("read store %s: %s", where, scrub(err.Error(), rawURL))
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&ok); err != nil {
		return false, fmt.Errorf("read store %s: %s", where, scrub(err.Error(), rawURL))
	}
	return ok, nil
}
