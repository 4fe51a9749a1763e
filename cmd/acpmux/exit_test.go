package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunStartFailuresExit1: acpmux run exits 1, with the flag named on
// stderr, when the decision store cannot be opened, the token file cannot
// be read or created, or the --listen address cannot be bound (docs/run.md,
// "Shutdown and exit status").
func TestRunStartFailuresExit1(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tokenFile := filepath.Join(dir, "token")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"store", []string{"--state", filepath.Join(notDir, "state.db")}, "open store "},
		{"token file", []string{"--state", ":memory:", "--listen", "127.0.0.1:0", "--token-file", filepath.Join(notDir, "token")}, "--token-file"},
		{"bind", []string{"--state", ":memory:", "--listen", busy.Addr().String(), "--token-file", tokenFile}, "--listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			args := append(append([]string{"run"}, tt.args...), "--", "true")
			code := Main(args, stdio{strings.NewReader(""), &out, &errb})
			if code != 1 || !strings.Contains(errb.String(), tt.stderr) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, errb.String(), tt.stderr)
			}
		})
	}
}
