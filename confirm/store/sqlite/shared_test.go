package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/storetest"
)

// TestSharedConformance runs the shared-store conformance suite on two
// stores opened on one file (two bridges on one machine).
func TestSharedConformance(t *testing.T) {
	storetest.RunSharedStore(t, func(t *testing.T) (store.Shared, store.Shared) {
		path := filepath.Join(t.TempDir(), "state.db")
		return open(t, path), open(t, path)
	})
}
