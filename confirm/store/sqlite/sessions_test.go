package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/store"
)

// TestSessionListsStayOffTheRows: with 20,000 decisions of 400 sessions
// in four bridges, the session list of GET /v1/sessions (which the
// inbox's page asks every second) reads the covering index
// decisions_by_bridge_session, in its order, and no decision row; one
// session's rows (which every route naming a session reads, so every
// answer) come from a search by session id. Both with and without ANALYZE's
// statistics, and both return what the whole table says.
func TestSessionListsStayOffTheRows(t *testing.T) {
	for _, analyzed := range []bool{false, true} {
		t.Run(fmt.Sprintf("analyzed=%v", analyzed), func(t *testing.T) { testSessionLists(t, analyzed) })
	}
}

func testSessionLists(t *testing.T, analyzed bool) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.db.Exec(`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
		INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id, closed_at, delivered_at)
		SELECT 'd' || n, 's' || (n % 400), 'k', 'o', CASE WHEN n % 1000 = 0 THEN 'open' ELSE 'answered' END, x'00',
			'{"cwd":"/src/p' || (n % 400) || '"}', n, n, 'b' || (n % 4), n, n FROM g`); err != nil {
		t.Fatal(err)
	}
	if analyzed {
		if _, err := s.db.Exec(`ANALYZE`); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(q string, args ...any) string {
		t.Helper()
		rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var steps []string
		for rows.Next() {
			var id, parent, notUsed int
			var detail string
			if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
				t.Fatal(err)
			}
			steps = append(steps, detail)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(steps, "\n")
	}
	if got := plan(sessionsQuery); got != "SCAN decisions USING COVERING INDEX decisions_by_bridge_session" {
		t.Errorf("query plan of the session list:\n%s\nwant one scan of the covering index decisions_by_bridge_session, no sort", got)
	}
	// One session: a search by session id, of decisions_by_session or,
	// with statistics that show few bridges, a skip-scan of
	// decisions_by_bridge_session (a seek per bridge); never a scan.
	if got := plan(sessionQuery, "s7"); !strings.HasPrefix(got, "SEARCH decisions USING ") || !strings.Contains(got, "session_id=?)") || strings.Contains(got, "SCAN decisions") {
		t.Errorf("query plan of one session's rows:\n%s\nwant a search by session id", got)
	}
	ctx := context.Background()
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
	// The control: without the index the list reads every row, sorted.
	if _, err := s.db.Exec(`DROP INDEX decisions_by_bridge_session`); err != nil {
		t.Fatal(err)
	}
	if got := plan(sessionsQuery); !strings.Contains(got, "SCAN decisions") {
		t.Errorf("without decisions_by_bridge_session the session list's plan is\n%s\nthe control should scan decisions", got)
	}
}
