package postgres_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/confirm/store/storetest"
	"github.com/acpmux/acpmux/internal/leakcheck"
	"github.com/acpmux/acpmux/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

func open(t *testing.T, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the store conformance suite on a real PostgreSQL
// server, each test on a fresh database; the shared suite with two Store
// instances (two bridges) on one database.
func TestConformance(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, srv.Database(t)) })
	storetest.RunShared(t, func(t *testing.T) (store.Store, store.Store) {
		url := srv.Database(t)
		return open(t, url), open(t, url)
	})
	storetest.RunRegistry(t, func(t *testing.T) store.Registry { return open(t, srv.Database(t)) },
		func(t *testing.T) (store.Registry, store.Registry) {
			url := srv.Database(t)
			return open(t, url), open(t, url)
		})
	storetest.RunFeed(t, func(t *testing.T) storetest.FeedStore { return open(t, srv.Database(t)) },
		func(t *testing.T) (storetest.FeedStore, storetest.FeedStore) {
			url := srv.Database(t)
			return open(t, url), open(t, url)
		})
}

// TestMigrationsOfBridgesStartingAtOnce: eight Opens at once on an empty
// database all succeed and leave one schema at the current version.
func TestMigrationsOfBridgesStartingAtOnce(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.Database(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, v int
	if err := conn.QueryRow(context.Background(), `SELECT count(*), max(version) FROM schema_version`).Scan(&rows, &v); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || v != postgres.SchemaVersion {
		t.Fatalf("schema_version has %d rows, version %d; want 1 row, version %d", rows, v, postgres.SchemaVersion)
	}
}

// TestNewerSchemaIsRefused: a database whose schema_version is beyond
// what this acpmux knows is not opened, with ErrSchemaTooNew.
func TestNewerSchemaIsRefused(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.Database(t)
	open(t, url).Close()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(context.Background(), url)
	if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("open of a newer schema: %v, want ErrSchemaTooNew naming version 99", err)
	}
}

// TestPasswordNeverInErrorsOrPath: a URL's password (user info or
// parameter) is redacted in Path and in the error of a failed Open.
func TestPasswordNeverInErrorsOrPath(t *testing.T) {
	for _, url := range []string{
		"postgres://bob:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=1",
		"postgresql://bob@127.0.0.1:1/db?password=s3cr3t-pw&connect_timeout=1",
		"postgres://bob:s3cr3t-pw@127.0.0.1:notaport/db",
		"postgres://bob@127.0.0.1/db?password=s3cr3t-pw&sslmode=bogus",
		"postgres://bob:s3cr3t-pw@[::1/db",
	} {
		if got := postgres.Redact(url); strings.Contains(got, "s3cr3t-pw") || !strings.Contains(got, "xxxxx") && !strings.Contains(got, "unparsable") {
			t.Errorf("Redact(%q) = %q", url, got)
		}
		_, err := postgres.Open(context.Background(), url)
		if err == nil || strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("Open(%q) error %v", url, err)
		}
	}
}
