package main

import (
	"strings"
	"testing"

	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestPostgresOpenErrorsSayWhatToCheck: a PostgreSQL --state that cannot be
// opened is one line saying what is wrong and what to check (no server at
// the address, an unknown database, an unknown user), not pgx's text.
func TestPostgresOpenErrorsSayWhatToCheck(t *testing.T) {
	code, _, errs := runCLI("run", "--state", "postgres://u:hunter2@127.0.0.1:1/db", "--", "true")
	if code != 1 || !strings.Contains(errs, "no PostgreSQL server accepts connections at 127.0.0.1:1 (check the URL's host and port") ||
		strings.Contains(errs, "hunter2") || strings.Contains(errs, "dial error") {
		t.Errorf("no server: exit %d, stderr %q", code, errs)
	}
	srv := pgtest.Start(t)
	good := srv.Database(t)
	for _, tt := range []struct{ name, url, want string }{
		{"no database", strings.Replace(good, "postgres:///t", "postgres:///nosuchdb", 1), `" does not exist (create it, e.g. createdb nosuchdb`},
		{"no user", strings.Replace(good, "user=", "user=nosuchuser&x=", 1), `the server refused the login of user "nosuchuser" (check the password`},
	} {
		code, _, errs := runCLI("run", "--state", tt.url, "--", "true")
		if code != 1 || !strings.Contains(errs, tt.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q, want one line with %q", tt.name, code, errs, tt.want)
		}
	}
}
