package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// TestAnchorCoversPlaceholdersOfEarlierPrunes: a store pruned before
// prune events existed (its placeholders name no prune) is upgraded; the
// anchor written at the upgrade records those placeholders, so the chain
// verifies; editing one of them afterwards is a break.
func TestAnchorCoversPlaceholdersOfEarlierPrunes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	last := len(sqlite.Migrations) - 1
	c1 := store.ChainContent(store.ChainDecisionEvents, "gone", int64(1), int64(1), "opened", "", "", "")
	h1 := store.ChainHash("", c1)
	c2 := store.ChainContent(store.ChainDecisionEvents, "gone", int64(2), int64(2), "timed_out", "", "", "")
	h2 := store.ChainHash(h1, c2)
	for _, q := range append(append([]string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`}, sqlite.Migrations[:last]...),
		`INSERT INTO schema_version VALUES (`+strconv.Itoa(last)+`)`,
		// as the previous version's prune left them: placeholders with no prune id
		`INSERT INTO chain_pruned (seq, table_name, row_key, prev, hash, pruned_at) VALUES
			(1, 'decision_events', 'decision=gone seq=1', '', '`+h1+`', 5), (2, 'decision_events', 'decision=gone seq=2', '`+h1+`', '`+h2+`', 5)`,
		`UPDATE chain_head SET seq = 2, hash = '`+h2+`'`,
	) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s := open(t, path)
	ctx := context.Background()
	head, rows, err := s.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.VerifyChain(head, rows); err != nil || n != 3 {
		t.Fatalf("after the upgrade: %d rows, %v; want the 2 placeholders and the anchor", n, err)
	}
	// The anchor recorded the placeholders as they were, their decision
	// read from the row key at the upgrade.
	if err := sqlite.ExecForTest(s, `UPDATE chain_pruned SET decision_id = 'other' WHERE seq = 1`); err != nil {
		t.Fatal(err)
	}
	head, rows, _ = s.ChainState(ctx)
	var ce *store.ChainError
	if _, err := store.VerifyChain(head, rows); !errors.As(err, &ce) || ce.Seq != 1 || !strings.Contains(ce.Problem, "not one of the placeholders") {
		t.Fatalf("after editing a placeholder the anchor covers: %v", err)
	}
}
