package postgres_test

import (
	"testing"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/storetest"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestSharedConformance runs the shared-store conformance suite on two
// stores opened on one PostgreSQL database (two bridges, perhaps on two
// machines).
func TestSharedConformance(t *testing.T) {
	srv := pgtest.Start(t)
	storetest.RunSharedStore(t, func(t *testing.T) (store.Shared, store.Shared) {
		url := srv.Database(t)
		return open(t, url), open(t, url)
	})
}
