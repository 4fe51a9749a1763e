package postgres_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestSessionListsStayOffTheRows: with 20,000 decisions of 400 sessions
// in four bridges, each with a snapshot of 1 KB, the session list of GET
// /v1/sessions (which the inbox's page asks every second) reads the index
// decisions_by_bridge_session and no decision row, and one session's rows
// (which every route naming a session reads, so every answer) come from
// decisions_by_session: a few pages where the table has thousands. The
// controls drop each index: the same reads then scan the table. Both
// return what the whole table says.
func TestSessionListsStayOffTheRows(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Start(t)
	url := srv.Database(t)
	s := open(t, url) // postgres_test.go: migrates
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id, closed_at, delivered_at)
			SELECT 'd' || g, 's' || (g % 400), 'k', 'o', CASE WHEN g % 1000 = 0 THEN 'open' ELSE 'answered' END, '\x00',
				'{"cwd":"/src/p' || (g % 400) || '","pad":"' || repeat('x', 1000) || '"}', g, g, 'b' || (g % 4),
				CASE WHEN g % 1000 = 0 THEN NULL ELSE g END, CASE WHEN g % 1000 = 0 THEN NULL ELSE g END
			FROM generate_series(1, 20000) g`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// As autovacuum leaves the history: analyzed and all-visible, so that
	// an index-only scan reads no row. A VACUUM right after the insert may
	// not mark the pages yet (a connection of the server may still see
	// them as new): it runs until it did.
	var tablePages, visible int
	for range 100 {
		if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) decisions`); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, `SELECT relpages, relallvisible FROM pg_class WHERE relname = 'decisions'`).Scan(&tablePages, &visible); err != nil {
			t.Fatal(err)
		}
		if visible == tablePages {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if visible != tablePages {
		t.Fatalf("VACUUM left %d of %d pages of decisions all-visible", visible, tablePages)
	}
	t.Logf("decisions has %d pages", tablePages)
	t.Run("every session", func(t *testing.T) {
		pages, scanned := explainPages(t, conn, nil, postgres.SessionsQuery)
		t.Logf("read %d pages", pages)
		if scanned || pages > tablePages/10 {
			t.Fatalf("read %d pages (a scan of decisions: %v), want under %d: decisions_by_bridge_session only", pages, scanned, tablePages/10)
		}
		without, scannedWithout := explainPages(t, conn, []string{`DROP INDEX decisions_by_bridge_session`}, postgres.SessionsQuery)
		t.Logf("without decisions_by_bridge_session: read %d pages", without)
		if !scannedWithout || without < tablePages {
			t.Fatalf("without decisions_by_bridge_session read %d pages (a scan: %v); the control should read the table's %d", without, scannedWithout, tablePages)
		}
	})
	t.Run("one session", func(t *testing.T) {
		pages, scanned := explainPages(t, conn, nil, postgres.SessionQuery, "s7")
		t.Logf("read %d pages", pages)
		if scanned || pages > 100 {
			t.Fatalf("read %d pages (a scan of decisions: %v), want under 100: its 50 decisions through decisions_by_session", pages, scanned)
		}
		// The control: without decisions_by_session the read goes through
		// every decision's entry of decisions_by_bridge_session.
		without, _ := explainPages(t, conn, []string{`DROP INDEX decisions_by_session`}, postgres.SessionQuery, "s7")
		t.Logf("without decisions_by_session: read %d pages", without)
		if without < 2*pages {
			t.Fatalf("without decisions_by_session read %d pages; the control should read more than twice %d", without, pages)
		}
	})
	all, err := s.SessionsOf(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 400 {
		t.Fatalf("%d sessions listed, want 400", len(all))
	}
	var want []store.SessionRow
	for _, r := range all {
		if r.SessionID == "s7" {
			want = append(want, r)
		}
	}
	got, err := s.SessionsOf(ctx, "s7")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got) != 1 || got[0].Decisions != 50 {
		t.Fatalf("SessionsOf(s7) = %+v, want %+v (50 decisions of bridge b3)", got, want)
	}
}
