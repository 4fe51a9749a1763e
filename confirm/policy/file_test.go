//go:build unix

package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acpmux/acpmux/confirm/policy"
)

// Load reads only a regular file of at most 1 MiB: a FIFO (even one
// nobody will ever write to), a directory, a device and a larger file are
// errors that say what the path is, and none of them blocks.
func TestLoadPolicyRefusesAnythingButASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#\n", policy.MaxFileBytes/2+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	limit := filepath.Join(dir, "limit.toml")
	if err := os.WriteFile(limit, []byte(strings.Repeat("#\n", policy.MaxFileBytes/2)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"fifo", fifo, "is a FIFO"},
		{"directory", dir, "is a directory"},
		{"device", "/dev/null", "is a device"},
		{"larger than 1 MiB", big, "larger than the limit of 1048576 bytes"},
		{"exactly 1 MiB", limit, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policy.Load(tc.path)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, policy.ErrInvalid) {
				t.Fatalf("got %v, want an ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}
