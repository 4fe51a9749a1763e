package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestHeartbeatReadsStayOffTheHistory: a bridge's heartbeat reads
// (Unsettled) and the lost-owner sweep (LoseOwners) touch a few pages of
// a store holding 20,000 delivered decisions and a registry with a bridge
// that stopped heartbeating long ago (as every bridge that exited has),
// instead of every closed decision at every heartbeat of every process.
// The control drops decisions_unsettled: the same sweep then reads the
// whole table.
func TestHeartbeatReadsStayOffTheHistory(t *testing.T) {
	ctx := context.Background()
	conn := migratedConn(t, pgtest.Start(t)) // planshape_test.go
	for _, q := range []string{
		`INSERT INTO bridges (id, name, host, agent, cwd, pid, started, heartbeat)
			VALUES ('gone', 'gone', 'box', '[]', '/', 1, 1, 1), ('live', 'live', 'box', '[]', '/', 2, 1, 9000000000000000000)`,
		// History: delivered decisions of both bridges; in flight: one
		// open and one claimed, undelivered decision of each.
		`INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id, closed_at, delivered_at)
			SELECT 'd' || g, 's', 'k', 'o', 'answered', '\x00', repeat('x', 1000), g, g, CASE WHEN g % 2 = 0 THEN 'gone' ELSE 'live' END, g, g
			FROM generate_series(1, 20000) g`,
		`INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id, closed_at)
			VALUES ('open-gone', 's', 'k', 'o', 'open', '\x00', '{}', 1, 1, 'gone', NULL), ('open-live', 's', 'k', 'o', 'open', '\x00', '{}', 1, 1, 'live', NULL),
			('claimed-gone', 's', 'k', 'o', 'answered', '\x00', '{}', 1, 1, 'gone', 5), ('claimed-live', 's', 'k', 'o', 'answered', '\x00', '{}', 1, 1, 'live', 5)`,
		`ANALYZE decisions`, `ANALYZE bridges`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const cutoff = int64(900_000_000_000_000_000) // after every decision closed
	for _, c := range []struct {
		name string
		q    string
		args []any
	}{
		{"Unsettled", postgres.UnsettledQuery, []any{"live"}},
		{"LoseOwners", postgres.LoseOwnersQuery, []any{"owner_lost", cutoff, cutoff}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pages, scanned := explainPages(t, conn, nil, c.q, c.args...)
			t.Logf("%s read %d pages", c.name, pages)
			if scanned || pages > 50 {
				t.Fatalf("read %d pages (a scan of decisions: %v), want a few from the partial indexes", pages, scanned)
			}
			// The control: without the index each reads the history.
			without, _ := explainPages(t, conn, []string{`DROP INDEX decisions_unsettled`}, c.q, c.args...)
			t.Logf("%s without decisions_unsettled read %d pages", c.name, without)
			if without < 1000 {
				t.Fatalf("without decisions_unsettled %s read %d pages; the control should read a bridge's or every decision", c.name, without)
			}
		})
	}
	// What the sweep closes is unchanged: the gone bridge's open and
	// claimed-undelivered decisions, nothing of the live bridge's or of
	// the history.
	rows, err := conn.Query(ctx, postgres.LoseOwnersQuery, "owner_lost", cutoff, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ids, ","); got != "open-gone,claimed-gone" && got != "claimed-gone,open-gone" {
		t.Fatalf("the sweep closed %q, want open-gone and claimed-gone", got)
	}
}

// explainPages runs q with args on conn in a transaction it rolls back,
// after the statements before, and returns the pages its plan read and
// whether it scanned decisions whole.
func explainPages(t *testing.T, conn *pgx.Conn, before []string, q string, args ...any) (pages int, scanned bool) {
	t.Helper()
	ctx := context.Background()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	for _, b := range before {
		if _, err := tx.Exec(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var out []byte
	if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+q, args...).Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plan []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal(out, &plan); err != nil {
		t.Fatal(err)
	}
	hit, _ := plan[0].Plan["Shared Hit Blocks"].(float64)
	read, _ := plan[0].Plan["Shared Read Blocks"].(float64)
	return int(hit + read), seqScans(plan[0].Plan, "decisions")
}

// seqScans reports whether the plan node n, or a node under it, is a
// sequential scan of table.
func seqScans(n map[string]any, table string) bool {
	if n["Node Type"] == "Seq Scan" && n["Relation Name"] == table {
		return true
	}
	subs, _ := n["Plans"].([]any)
	for _, sub := range subs {
		if m, ok := sub.(map[string]any); ok && seqScans(m, table) {
			return true
		}
	}
	return false
}

// TestHeartbeatReadsArePlannedAtEachRun: the heartbeat's reads, run by
// the store every 2 s for its connection's life, leave no named statement
// with a plan of its own, so a plan made while the table was small is not
// kept as it grows. The control is the sweep's read as it was first
// written, as a named prepared statement, run eight times on 50
// decisions: after 20,000 more, it still scans decisions whole.
func TestHeartbeatReadsArePlannedAtEachRun(t *testing.T) {
	ctx := context.Background()
	conn := migratedConn(t, pgtest.Start(t)) // planshape_test.go
	grow := func(from, to int) {
		t.Helper()
		if _, err := conn.Exec(ctx, `INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id, closed_at, delivered_at)
			SELECT 'd' || g, 's', 'k', 'o', 'answered', '\x00', repeat('x', 1000), g, g, CASE WHEN g % 2 = 0 THEN 'gone' ELSE 'live' END, g, g
			FROM generate_series($1::int, $2::int) g`, from, to); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Exec(ctx, `INSERT INTO bridges (id, name, host, agent, cwd, pid, started, heartbeat)
		VALUES ('gone', 'gone', 'box', '[]', '/', 1, 1, 1), ('live', 'live', 'box', '[]', '/', 2, 1, 9000000000000000000)`); err != nil {
		t.Fatal(err)
	}
	grow(1, 50)
	if _, err := conn.Exec(ctx, `ANALYZE decisions`); err != nil {
		t.Fatal(err)
	}
	cutoff := time.Unix(0, 900_000_000_000_000_000)
	// The control: a named statement of the sweep's read as it was
	// written before (a join of decisions and bridges), whose generic plan
	// made on the small table scans decisions once it grew.
	const control = `SELECT d.id FROM decisions d, bridges b WHERE $1::text <> '' AND $2::bigint <> 0 AND b.id = d.bridge_id
		AND d.bridge_id <> '' AND b.heartbeat < $3 AND (d.status = 'open'
		OR (d.status <> 'open' AND d.delivered_at IS NULL AND d.status = 'answered' AND d.closed_at < $3))`
	if _, err := conn.Prepare(ctx, "control", control); err != nil {
		t.Fatal(err)
	}
	for range 8 { // past the five custom plans after which a generic one may stay
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, run := range []func() error{
			func() error { return postgres.UnsettledOn(ctx, tx, "live") },
			func() error { return postgres.LoseOwnersOn(ctx, tx, cutoff, cutoff) },
			func() error {
				rows, err := tx.Query(ctx, "control", "x", int64(1), cutoff.UnixNano())
				rows.Close()
				return err
			},
		} {
			if err := run(); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
	grow(51, 20_050)
	var plan strings.Builder
	rows, err := conn.Query(ctx, `EXPLAIN EXECUTE control('x', 1, 900000000000000000)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	rows.Close()
	if !strings.Contains(plan.String(), "Seq Scan on decisions") {
		t.Fatalf("the control does not scan the grown table, so this test shows nothing:\n%s", plan.String())
	}
	for name, sql := range map[string]string{"Unsettled": postgres.UnsettledQuery, "LoseOwners": postgres.LoseOwnersQuery} {
		var named int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`, sql).Scan(&named); err != nil || named != 0 {
			t.Fatalf("%s left %d prepared statements on the connection (%v)", name, named, err)
		}
	}
}
