package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// TestEveryPathFormOpensAndProbes opens a store at each form of path a
// user may give --state (relative, ./x, absolute, with a space, '?', '#'
// or '%') and checks that IsStore, which the read-only commands call
// first, finds the store at the same path.
func TestEveryPathFormOpensAndProbes(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, path := range []string{
		"rel.db",
		"./dot.db",
		"sub/dir/nested.db",
		filepath.Join(dir, "abs.db"),
		"with space.db",
		"what?mode=memory.db",
		"hash#frag.db",
		"pct%20.db",
	} {
		t.Run(path, func(t *testing.T) {
			st, err := sqlite.Open(path)
			if err != nil {
				t.Fatalf("Open(%q): %v", path, err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			ok, err := sqlite.IsStore(t.Context(), path)
			if err != nil || !ok {
				t.Fatalf("IsStore(%q) = %v, %v; want true, nil", path, ok, err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the store is not at the path given: %v", err)
			}
		})
	}
}

// TestANewStoreIsTheOwnersOnly: a store file acpmux creates, and its -wal
// and -shm files, have mode 0600 (the directory 0700), whatever the umask
// lets other files have; an existing file keeps its mode.
func TestANewStoreIsTheOwnersOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "state.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", filepath.Base(p), fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	shared := filepath.Join(t.TempDir(), "shared.db")
	if err := os.WriteFile(shared, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	st2, err := sqlite.Open(shared)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if fi, err := os.Stat(shared); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("an existing file: %v, %v; want its mode 0640 kept", fi.Mode(), err)
	}
}
