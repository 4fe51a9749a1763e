package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestReadsByIDStayLookupsAsTheTableGrows: the reads of decisions by id
// are prepared once per connection (pgx's statement cache), and after five
// executions PostgreSQL may keep one generic plan for the connection's
// life. Planned while the table was new and small, for batches of 16 ids,
// that plan must still look each id up by primary key once the table
// holds thousands of rows, not scan it whole. The read the store used
// before ("WHERE id = ANY($1)") is the control: the same steps make it
// scan.
func TestReadsByIDStayLookupsAsTheTableGrows(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	open(t, url) // migrates
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	queries := map[string]string{
		"records": postgres.RecordsQuery,
		"settled": postgres.SettledQuery,
		"control": postgres.RecordsQueryBefore,
	}
	// grow inserts n decisions, from number from on.
	grow := func(from, n int) {
		t.Helper()
		if _, err := conn.Exec(ctx, `INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline)
			SELECT 'd' || g, 's', 'k', 'o', 'open', '\x00', repeat('x', 400), g, g FROM generate_series($1::int, $2::int) g`, from+1, from+n); err != nil {
			t.Fatal(err)
		}
	}
	for name, sql := range queries {
		if _, err := conn.Prepare(ctx, name, sql); err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
	}
	var batch []string // a batch of reads waiting at once (readgroup.go, settlepoll.go)
	for i := range 16 {
		batch = append(batch, fmt.Sprint("d", i+1))
	}
	for i := range 8 { // past the five custom plans after which the generic one may stay
		grow(i*20, 20) // as the table grows in the first second of a store
		for name := range queries {
			rows, err := conn.Query(ctx, name, batch)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rows.Close()
		}
	}
	grow(160, 5000)
	for name := range queries {
		var plan strings.Builder
		rows, err := conn.Query(ctx, fmt.Sprintf(`EXPLAIN EXECUTE %s('{d1,d2}')`, name))
		if err != nil {
			t.Fatalf("explain %s: %v", name, err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		rows.Close()
		scans := strings.Contains(plan.String(), "Seq Scan on decisions")
		if name == "control" {
			if !scans {
				t.Fatalf("the control read does not scan the grown table, so this test shows nothing:\n%s", plan.String())
			}
			continue
		}
		if scans {
			t.Errorf("%s scans the whole decisions table:\n%s", name, plan.String())
		}
	}
}
