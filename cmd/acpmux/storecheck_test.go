package main

import (
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// TestAuditVerifyRefusesAStoreWithNoChain: audit verify on a database
// with no acpmux tables (an empty file, a foreign SQLite database, a WAL
// store copied with cp without its -wal file) exits 1 with the sentence
// that says why, and leaves the file without tables: it is not turned
// into an empty store that verifies.
func TestAuditVerifyRefusesAStoreWithNoChain(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// A new store in use, in WAL mode: its tables are in the -wal file
	// until a checkpoint (at 1000 pages, or when the last connection
	// closes); cp copies only the main file.
	live := filepath.Join(dir, "live.db")
	st, err := sqlite.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	copied := filepath.Join(dir, "copied.db")
	cp(t, live, copied)
	for _, p := range []string{empty, foreign, copied} {
		code, out, errs := runCLI("audit", "verify", "--state", p)
		if code != 1 || out != "" || !strings.Contains(errs, "no audit chain in this store") ||
			!strings.Contains(errs, "not an acpmux store, or copied without its -wal file") {
			t.Errorf("audit verify %s: %d %q %q; want 1 and the reason", filepath.Base(p), code, out, errs)
		}
		if ok, err := sqlite.IsStore(t.Context(), p); err != nil || ok {
			t.Errorf("%s after audit verify: a store %v, %v; want left as it was", filepath.Base(p), ok, err)
		}
	}
	if code, out, _ := runCLI("audit", "verify", "--state", live); code != 0 || !strings.HasPrefix(out, "ok: ") {
		t.Errorf("audit verify of the live store: %d %q", code, out)
	}
}

func cp(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPruneRefusesAMissingOrForeignStore: prune --state on a file that
// does not exist exits 1 and does not create it; on a database with no
// acpmux tables it exits 1 and leaves it so.
func TestPruneRefusesAMissingOrForeignStore(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent.db")
	if code, out, errs := runCLI("prune", "--state", missing); code != 1 || out != "" || !strings.Contains(errs, "no decision store") {
		t.Errorf("prune of a missing store: %d %q %q; want 1, no decision store", code, out, errs)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("prune created %s: %v", missing, err)
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("prune", "--state", empty); code != 1 || !strings.Contains(errs, "not an acpmux store") {
		t.Errorf("prune of an empty file: %d %q; want 1, not an acpmux store", code, errs)
	}
	if ok, err := sqlite.IsStore(t.Context(), empty); err != nil || ok {
		t.Errorf("the empty file after prune: a store %v, %v", ok, err)
	}
}

// TestPruneRetainZeroAndRetainWithBeforeAreUsageErrors: --retain 0 (keep
// everything, for acpmux run) is refused with the reason and deletes
// nothing; --retain with --before is a usage error.
func TestPruneRetainZeroAndRetainWithBeforeAreUsageErrors(t *testing.T) {
	path := seedState(t, 10*24*time.Hour)
	if code, _, errs := runCLI("prune", "--state", path, "--retain", "0"); code != 2 || !strings.Contains(errs, "keep everything") {
		t.Errorf("prune --retain 0: %d %q; want 2 and the reason", code, errs)
	}
	if code, _, errs := runCLI("prune", "--state", path, "--retain", "1d", "--before", time.Now().Format(time.DateOnly)); code != 2 ||
		!strings.Contains(errs, "exclude each other") {
		t.Errorf("prune --retain with --before: %d %q; want 2", code, errs)
	}
	if got := kept(t, path); len(got) != 2 {
		t.Errorf("after the refused prunes: %v, want both decisions", got)
	}
}

// TestAuditVerifyAfterPruneRefusesADressedUpRow: after a real prune the
// chain verifies; a journal row of a decision still stored, deleted and
// copied into chain_pruned with the prune's id, is reported BROKEN.
func TestAuditVerifyAfterPruneRefusesADressedUpRow(t *testing.T) {
	path := seedState(t, 10*24*time.Hour)
	if code, _, errs := runCLI("prune", "--state", path, "--retain", "1d"); code != 0 {
		t.Fatalf("prune: %d %s", code, errs)
	}
	if code, out, errs := runCLI("audit", "verify", "--state", path); code != 0 || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("audit verify after prune: %d %q %q", code, out, errs)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO chain_pruned (seq, table_name, row_key, prev, hash, pruned_at, prune_id, decision_id)
		SELECT chain_seq, 'decision_events', 'decision=open seq=1', chain_prev, chain_hash, 1, (SELECT MAX(id) FROM prune_events), 'open'
		FROM decision_events WHERE decision_id = 'open';
		DELETE FROM decision_events WHERE decision_id = 'open'`); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI("audit", "verify", "--state", path); code != 1 || !strings.Contains(out, "BROKEN") || !strings.Contains(out, "pruned placeholder") {
		t.Errorf("audit verify after dressing up a row: %d %q; want BROKEN at the placeholder", code, out)
	}
}
