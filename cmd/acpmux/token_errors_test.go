package main

import (
	"path/filepath"
	"testing"
)

// TestTokenErrorsAreOneSentence: acpmux token's errors say what is wrong
// in a person's words, without the store's internal wording ("store
// revoke token: decision not found"), and a missing or extra NAME is a
// usage error (exit 2) that prints the verb's usage line.
func TestTokenErrorsAreOneSentence(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	addToken(t, state, "alice", "approver")
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"revoke a name without a token", []string{"revoke", "zed"}, 1,
			"acpmux token: zed has no token to revoke (acpmux token list shows every token)\n"},
		{"add a second token", []string{"add", "alice", "--role", "admin"}, 1,
			"acpmux token: alice already has a token; revoke it first (acpmux token revoke alice)\n"},
		{"add without NAME", []string{"add", "--role", "admin"}, 2,
			"acpmux token: add needs a NAME\nUsage: acpmux token add NAME --role ROLE [--expires DURATION] [--state PATH|URL]\nRun 'acpmux token --help' for usage.\n"},
		{"revoke without NAME", []string{"revoke"}, 2,
			"acpmux token: revoke needs a NAME\nUsage: acpmux token revoke NAME [--state PATH|URL]\nRun 'acpmux token --help' for usage.\n"},
		{"list with a NAME", []string{"list", "alice"}, 2,
			"acpmux token: list takes no NAME, got \"alice\"\nUsage: acpmux token list [--json] [--state PATH|URL]\nRun 'acpmux token --help' for usage.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(append(append([]string{"token"}, tc.args...), "--state", state)...)
			if code != tc.wantCode || errs != tc.wantErr {
				t.Errorf("got exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, errs, tc.wantCode, tc.wantErr)
			}
		})
	}
}
