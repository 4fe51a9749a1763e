package sqlite

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPruneReadsOnlyOldSessionEvents: the query plan of Prune's feed
// statement finds the session events before the cutoff as a range of an
// index on (decision_id, at), not by reading every session event (an
// index on decision_id alone leaves "at" to be read from each row).
func TestPruneReadsOnlyOldSessionEvents(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.db.Query(`EXPLAIN QUERY PLAN `+pruneFeed, nanos(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		if err := rows.Scan(&id, &parent, &notUsed, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := "feed_events_by_decision_at (decision_id=? AND at<?)"
	for _, d := range plan {
		if strings.HasPrefix(d, "SEARCH feed_events USING ") && strings.HasSuffix(d, want) {
			return
		}
	}
	t.Errorf("query plan of the feed prune:\n%s\nwant a step %q", strings.Join(plan, "\n"), want)
}
