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
