package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/internal/leakcheck"
	"github.com/acpmux/acpmux/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// TestStartRunsARealServer starts a throwaway server, queries it over its
// unix socket with pgx, and checks that Database gives each caller a
// database of its own.
func TestStartRunsARealServer(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatalf("connect %s: %v", s.URL, err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "show server_version").Scan(&v); err != nil || v == "" {
		t.Fatalf("server_version: %q %v", v, err)
	}
	a, b := s.Database(t), s.Database(t)
	if a == b {
		t.Fatalf("Database returned %s twice", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, "create table x (n int)"); err != nil {
		t.Fatal(err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	if _, err := cb.Exec(ctx, "select * from x"); err == nil {
		t.Fatal("a table of one database is visible in another")
	}
}
