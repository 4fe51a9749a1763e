package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestReadsByIDStayLookupsAsTheTableGrows: the reads of decisions by id
// (a batch of Gets, the settled read, each run here on the test's
// connection as the store runs it on its pool's) look each id up by
// primary key once the table holds thousands of rows, however the table
// looked while the connection first ran them: new and never analyzed, or
// analyzed while it held a few rows. The control is the same read as a named
// prepared statement, as pgx's statement cache ran it before: after five
// runs for batches of 16 ids while the table was small, PostgreSQL keeps
// a generic plan that scans the whole table, and keeps scanning it as the
// table grows.
func TestReadsByIDStayLookupsAsTheTableGrows(t *testing.T) {
	srv := pgtest.Start(t)
	for _, analyzed := range []bool{false, true} {
		t.Run(fmt.Sprintf("analyzed=%v", analyzed), func(t *testing.T) {
			ctx := context.Background()
			conn := migratedConn(t, srv)
			// grow inserts n decisions with snapshots of a realistic size,
			// numbered from from+1.
			grow := func(from, n int) {
				t.Helper()
				if _, err := conn.Exec(ctx, `INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline)
					SELECT 'd' || g, 's', 'k', 'o', 'open', '\x00', repeat('x', 1000), g, g FROM generate_series($1::int, $2::int) g`, from+1, from+n); err != nil {
					t.Fatal(err)
				}
			}
			grow(0, 50)
			if analyzed {
				if _, err := conn.Exec(ctx, `ANALYZE decisions`); err != nil { // as autovacuum's first ANALYZE does, at 50 rows
					t.Fatal(err)
				}
			}
			var batch []string // a batch of reads waiting at once (readgroup.go, settlepoll.go)
			for i := range 16 {
				batch = append(batch, fmt.Sprint("d", i+1))
			}
			if _, err := conn.Prepare(ctx, "control", postgres.RecordsQuery); err != nil {
				t.Fatal(err)
			}
			for range 8 { // past the five custom plans after which a generic one may stay
				for _, run := range []func() error{
					func() error { return postgres.SettledOn(ctx, conn, batch) },
					func() error { return postgres.RecordsOn(ctx, conn, batch) },
					func() error { rows, err := conn.Query(ctx, "control", batch); rows.Close(); return err },
				} {
					if err := run(); err != nil {
						t.Fatal(err)
					}
				}
			}
			grow(50, 5000)
			explain := func(rows pgx.Rows, err error) string {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var plan strings.Builder
				for rows.Next() {
					var line string
					if err := rows.Scan(&line); err != nil {
						t.Fatal(err)
					}
					plan.WriteString(line + "\n")
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				return plan.String()
			}
			control := explain(conn.Query(ctx, `EXPLAIN EXECUTE control('{d1,d2}')`))
			if !strings.Contains(control, "Seq Scan on decisions") {
				t.Fatalf("the control read does not scan the grown table, so this test shows nothing:\n%s", control)
			}
			for name, read := range map[string]struct {
				sql string
				run func(context.Context, *pgx.Conn, []string) error
			}{"records": {postgres.RecordsQuery, postgres.RecordsOn}, "settled": {postgres.SettledQuery, postgres.SettledOn}} {
				// The store's reads leave no named statement, with a plan
				// of its own, on the connection: each run is planned anew
				// for its ids and the table as it is.
				if err := read.run(ctx, conn, batch); err != nil {
					t.Fatal(err)
				}
				sql := read.sql
				var named int
				if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1 AND name <> 'control'`, sql).Scan(&named); err != nil || named != 0 {
					t.Fatalf("%s left %d prepared statements on the connection (%v)", name, named, err)
				}
				if plan := explain(postgres.QueryPlanned(ctx, conn, "EXPLAIN "+sql, batch)); strings.Contains(plan, "Seq Scan on decisions") {
					t.Errorf("%s scans the whole decisions table:\n%s", name, plan)
				}
			}
		})
	}
}

// TestReadsByIDOddIDs: a read of an id that no stored id can be (one
// holding a NUL, or not valid UTF-8) is not found, and fails no other read
// of its batch; the settled read returns a decision named twice once.
func TestReadsByIDOddIDs(t *testing.T) {
	s := open(t, pgtest.Start(t).Database(t))
	ctx := context.Background()
	now := time.Now()
	for _, id := range []string{"d1", "d2"} {
		rec := store.Record{ID: id, SessionID: "s", AgentKey: "k-" + id, Request: []byte(`{}`), Snapshot: json.RawMessage(`{}`),
			Status: store.StatusOpen, CreatedAt: now, Deadline: now.Add(time.Minute), Events: []store.Event{{Seq: 1, At: now, Type: store.EventOpened}}}
		if _, _, err := s.Insert(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if won, err := s.Claim(ctx, id, store.Transition{Status: store.StatusCancelled, Reason: store.ReasonTimeout, At: now,
			Event: store.Event{Seq: 2, At: now, Type: store.EventTimedOut}}); err != nil || !won {
			t.Fatalf("close %s: %v %v", id, won, err)
		}
	}
	for range 50 { // Gets waiting at once share a statement (readgroup.go)
		var wg sync.WaitGroup
		var good error
		evil := make([]error, 4)
		for i := range evil {
			id := []string{"evil\x00", "bad\xff"}[i%2]
			wg.Go(func() { _, evil[i] = s.Get(ctx, id) })
		}
		wg.Go(func() { _, good = s.Get(ctx, "d1") })
		wg.Wait()
		if good != nil {
			t.Fatalf("Get(d1) batched with ids no stored id can be: %v", good)
		}
		for _, err := range evil {
			if !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("Get of an id no stored id can be: %v, want ErrNotFound", err)
			}
		}
	}
	got, err := s.Settled(ctx, []string{"d1", "d1", "evil\x00", "d2", "bad\xff", "d1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if slices.Sort(ids); !slices.Equal(ids, []string{"d1", "d2"}) {
		t.Fatalf("Settled of d1 three times, d2 and two ids no stored id can be: %v, want d1 and d2 once each", ids)
	}
}

// migratedConn returns a connection of the test's own to a fresh database
// of srv that a Store has migrated, closed when the test ends.
func migratedConn(t *testing.T, srv *pgtest.Server) *pgx.Conn {
	t.Helper()
	url := srv.Database(t)
	open(t, url) // migrates
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
