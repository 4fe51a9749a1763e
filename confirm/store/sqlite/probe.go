package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
)

// IsStore reports whether the SQLite file at path holds an acpmux store
// (its schema_version table), reading it without creating or changing it.
// A file that is not one: an empty or foreign database, or a store in WAL
// mode copied without its -wal file (its tables may still be only in the
// -wal). The file must exist.
func IsStore(ctx context.Context, path string) (bool, error) {
	dsn, err := fileURI(path, "mode=ro")
	if err != nil {
		return false, fmt.Errorf("read store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn)
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

// uriEscaper percent-encodes the bytes an SQLite URI filename gives a
// meaning: '?' starts the query, '#' the fragment, '%' an escape.
var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// fileURI is path as an SQLite URI filename with query appended
// (https://sqlite.org/uri.html). The path is made absolute first, so a
// relative one is not read as an authority (file://rel.db) and every path
// the operating system accepts, spaces, '?', '#' and '%' included, names
// the same file in Open and IsStore.
func fileURI(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return "file:" + uriEscaper.Replace(abs) + "?" + query, nil
}
