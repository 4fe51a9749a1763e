package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
)

// IsStore reports whether the SQLite file at path holds an acpmux store
// (its schema_version table), reading it without creating or changing it.
// A file that is not one: an empty or foreign database, or a store in WAL
// mode copied without its -wal file (its tables may still be only in the
// -wal). The file must exist.
func IsStore(ctx context.Context, path string) (bool, error) {
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return false, fmt.Errorf("read store %s: %w", path, err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).Scan(&n); err != nil {
		return false, fmt.Errorf("read store %s: %w", path, err)
	}
	return n > 0, nil
}
