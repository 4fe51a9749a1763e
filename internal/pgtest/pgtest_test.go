package pgtest_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

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

// TestCPUCountsTheBackends: a query that keeps a backend busy shows in
// the server's CPU reading, both while its connection is open and after it
// closed (the postmaster reaped the backend).
func TestCPUCountsTheBackends(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	before, ok := s.CPU()
	if !ok {
		t.Skip("no /proc to read")
	}
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	busy := func() {
		t.Helper()
		var n int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM generate_series(1, 5000000)").Scan(&n); err != nil || n != 5000000 {
			t.Fatalf("count %d: %v", n, err)
		}
	}
	busy()
	open, _ := s.CPU()
	if open-before < 50*time.Millisecond {
		t.Fatalf("a busy backend used %v of CPU by the reading, want at least 50ms", open-before)
	}
	busy()
	conn.Close(ctx)
	// The backend exits after the client left, and its time moves to the
	// postmaster's reaped children's once it is reaped.
	for deadline := time.Now().Add(10 * time.Second); ; {
		closed, _ := s.CPU()
		if closed >= open+50*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the backend exited the reading went from %v to %v: its time was lost", open, closed)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCPUNeverGoesBack: while backends start and exit (a client opening
// short connections one after the other), each reading is at least the
// one before: a backend reaped during a reading is counted once, not lost.
func TestCPUNeverGoesBack(t *testing.T) {
	s := pgtest.Start(t)
	ctx := context.Background()
	if _, ok := s.CPU(); !ok {
		t.Skip("no /proc to read")
	}
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			conn, err := pgx.Connect(ctx, s.URL)
			if err != nil {
				t.Error(err)
				return
			}
			conn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 20000)")
			conn.Close(ctx)
		}
	})
	last, _ := s.CPU()
	for range 50 {
		now, ok := s.CPU()
		if !ok {
			t.Fatal("no reading")
		}
		if now < last {
			t.Errorf("the reading went back from %v to %v", last, now)
		}
		last = now
	}
	close(stop)
	churn.Wait()
}
