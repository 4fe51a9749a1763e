package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// TestChainStartsAtTheMigration: a database of schema version 3 with a
// journal is migrated; its old rows carry no hash and the chain starts
// after them, at the anchor the store writes when it opens; new rows are
// chained; removing an old row is reported.
func TestChainStartsAtTheMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version VALUES (3)`},
		sqlite.Migrations[:3]...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO decisions (id, session_id, agent_key, owner, status, request, snapshot, created_at, deadline, reason)
			VALUES ('old', 's', 'k', 'gone/1/x', 'cancelled', x'7b7d', '{}', 1, 2, 'timeout')`,
		`INSERT INTO decision_events (decision_id, seq, at, type) VALUES ('old', 1, 1, 'opened'), ('old', 2, 2, 'timed_out')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := open(t, path)
	ctx := context.Background()
	if err := s.Append(ctx, "old", store.Event{Seq: 3, At: time.Now(), Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	head, rows, err := s.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.VerifyChain(head, rows); err != nil || n != 2 || head.Legacy[store.ChainDecisionEvents] != 2 {
		t.Fatalf("after the migration: %d rows, %v, legacy %v", n, err, head.Legacy)
	}
	if err := sqlite.ExecForTest(s, `DELETE FROM decision_events WHERE decision_id = 'old' AND seq = 1`); err != nil {
		t.Fatal(err)
	}
	head, rows, _ = s.ChainState(ctx)
	var ce *store.ChainError
	if _, err := store.VerifyChain(head, rows); !errors.As(err, &ce) || !strings.Contains(ce.Problem, "from before the chain started were removed") {
		t.Fatalf("after removing an old row: %v", err)
	}
}
