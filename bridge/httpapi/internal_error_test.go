package httpapi_test

import (
	"database/sql"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// A store failure is a 500 whose message says where the error is (the
// log) and not what it is: the SQL text of a store's error, which can name
// tables and files, never reaches the client.
func TestInternalErrorBodyHidesTheStoreError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b, err := confirm.NewBroker(confirm.Options{Store: s, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`ALTER TABLE decisions RENAME TO decisions_gone`); err != nil {
		t.Fatal(err)
	}
	base := server(t, b)
	status, m := call(t, "GET", base+"/v1/sessions/sess_1/decisions/no-such-decision", "")
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if status != http.StatusInternalServerError || e["code"] != "internal" {
		t.Fatalf("status %d, body %v; want 500 internal", status, m)
	}
	if strings.Contains(msg, "decisions") || strings.Contains(msg, "SQL") || !strings.Contains(msg, "log") {
		t.Errorf("message %q: want the pointer to the log, not the store's error", msg)
	}
}
