package main

import (
	"database/sql"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Errors of the command line are one sentence that says what to do, and
// a malformed flag value exits 2 (docs/run.md, "Exit status").
func TestCLIErrorsSayWhatToDo(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	noACP := httptest.NewServer(http.NotFoundHandler()) // an inbox: no /acp
	defer noACP.Close()
	foreign := filepath.Join(dir, "other.db") // another program's SQLite database
	if db, err := sql.Open("sqlite", foreign); err != nil {
		t.Fatal(err)
	} else if _, err := db.Exec(`CREATE TABLE precious (x)`); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}
	tok := filepath.Join(dir, "tok")
	if err := os.WriteFile(tok, []byte("t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"decisions", "list", "--url", "127.0.0.1:7820"}, 2, "want http://HOST:PORT"},
		{[]string{"decisions", "list", "--url", "http://127.0.0.1:1", "--token-file", filepath.Join(dir, "none")}, 1,
			"no token file " + filepath.Join(dir, "none") + ": pass the --token-file that acpmux run --listen wrote"},
		{[]string{"token"}, 2, "acpmux token: missing subcommand (add, list or revoke)\nRun 'acpmux token --help' for usage.\n"},
		{[]string{"audit", "--state", filepath.Join(dir, "none.db")}, 1, "no decision store at " + filepath.Join(dir, "none.db") + ": acpmux run creates it"},
		{[]string{"config", "--config", filepath.Join(dir, "none.toml"), "run"}, 2, "no configuration file " + filepath.Join(dir, "none.toml")},
		{[]string{"inbox", "--listen", busy, "--state", filepath.Join(dir, "s.db"), "--token-file", filepath.Join(dir, "tok")}, 1,
			"the address is in use (another acpmux, or another program, listens there): pick another port, or 127.0.0.1:0 for a free one"},
		{[]string{"run", "--listen", "127.0.0.1:99999", "--", "true"}, 2, "the port must be a number from 0 to 65535"},
		{[]string{"inbox", "--listen", "127.0.0.1:http", "--state", filepath.Join(dir, "s.db")}, 2, "the port must be a number from 0 to 65535"},
		{[]string{"inbox", "--listen", "127.0.0.1:0", "--state", foreign, "--token-file", tok}, 1,
			"--state " + foreign + ": not an acpmux store, or copied without its -wal file: pass the --state your bridges use"},
		{[]string{"inbox", "--listen", "127.0.0.1:0", "--state", "postgres://x@127.0.0.1:1/db?sslmode=disable", "--token-file", tok}, 1,
			"and that the server is running; or choose another --state)"}, // no --state :memory: for the inbox
		{[]string{"audit", "--state", "postgres://x@127.0.0.1:1/db?sslmode=disable"}, 1,
			"and that the server is running; or choose another --state)"}, // no --state :memory: for what reads a store
		{[]string{"inbox", "--state", filepath.Join(dir, "s.db")}, 2, "acpmux inbox: --listen ADDR is required"},
		{[]string{"inbox", "--listen", "127.0.0.1:0", "extra"}, 2, `acpmux inbox: takes no arguments (got "extra")`},
		{[]string{"attach", "--token-file", tok, noACP.URL}, 1, "nothing serves ACP there; attach to a bridge started with acpmux run --listen"},
		{[]string{"token", "add", "token-file", "--role", "approver", "--state", filepath.Join(dir, "s.db")}, 2, `name "token-file" is reserved`},
	} {
		code, _, errs := runCLI(tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("acpmux %s: status %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), code, errs, tt.code, tt.want)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("acpmux %s: more than two lines on stderr:\n%s", strings.Join(tt.args, " "), errs)
		}
	}
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&tables); err != nil || tables != 1 {
		t.Errorf("the other program's database after acpmux inbox: %d tables, %v; want its one table", tables, err)
	}
}
