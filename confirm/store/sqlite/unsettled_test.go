package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeartbeatReadsStayOffTheHistory: with 20,000 delivered decisions in
// the file and a bridge in the registry that stopped heartbeating long ago
// (as every bridge that exited has), the plans of a bridge's heartbeat
// read (Unsettled) and of the lost-owner sweep (LoseOwners) take the
// undelivered rows from decisions_unsettled (and the open ones from an
// index of open rows), never scanning decisions; the sweep still selects
// exactly the gone bridge's open and claimed-undelivered decisions. SQLite
// plans from the statistics ANALYZE leaves, which a store has only once
// someone ran it: both ways.
func TestHeartbeatReadsStayOffTheHistory(t *testing.T) {
	for _, analyzed := range []bool{false, true} {
		t.Run(fmt.Sprintf("analyzed=%v", analyzed), func(t *testing.T) { testHeartbeatReads(t, analyzed) })
	}
}

func testHeartbeatReads(t *testing.T, analyzed bool) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, q := range []string{
		`INSERT INTO bridges (id, name, host, agent, cwd, pid, started, heartbeat)
			VALUES ('gone', 'gone', 'box', '[]', '/', 1, 1, 1), ('live', 'live', 'box', '[]', '/', 2, 1, 9000000000000000000)`,
		`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
			INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id, closed_at, delivered_at)
			SELECT 'd' || n, 's', 'k', 'o', 'answered', x'00', '{}', n, n, CASE WHEN n % 2 = 0 THEN 'gone' ELSE 'live' END, n, n FROM g`,
		`INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, bridge_id, closed_at)
			VALUES ('open-gone', 's', 'k', 'o', 'open', x'00', '{}', 1, 1, 'gone', NULL), ('open-live', 's', 'k', 'o', 'open', x'00', '{}', 1, 1, 'live', NULL),
			('claimed-gone', 's', 'k', 'o', 'answered', x'00', '{}', 1, 1, 'gone', 5), ('claimed-live', 's', 'k', 'o', 'answered', x'00', '{}', 1, 1, 'live', 5)`,
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if analyzed {
		if _, err := s.db.Exec(`ANALYZE`); err != nil {
			t.Fatal(err)
		}
	}
	const cutoff = int64(900_000_000_000_000_000)
	plan := func(q string, args ...any) []string {
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
		return steps
	}
	for name, steps := range map[string][]string{
		"Unsettled":  plan(unsettledQuery, "live"),
		"LoseOwners": plan(loseOwnersQuery, cutoff),
	} {
		all := strings.Join(steps, "\n")
		t.Logf("query plan of %s:\n%s", name, all)
		if !strings.Contains(all, "decisions_unsettled") || strings.Contains(all, "SCAN d\n") || strings.HasSuffix(all, "SCAN d") ||
			strings.Contains(all, "SCAN decisions") {
			t.Errorf("query plan of %s:\n%s\nwant decisions_unsettled and no scan of decisions", name, all)
		}
	}
	rows, err := s.db.Query(loseOwnersQuery, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if got := strings.Join(ids, ","); got != "open-gone,claimed-gone" && got != "claimed-gone,open-gone" {
		t.Fatalf("the sweep selects %q, want open-gone and claimed-gone", got)
	}
}
