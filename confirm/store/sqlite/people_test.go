package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/acpmux/acpmux/confirm/store/sqlite"
	"github.com/acpmux/acpmux/confirm/store/storetest"
)

// TestPeopleConformance runs the tokens, votes and chain suites on a file
// database, tampering with it through a second connection.
func TestPeopleConformance(t *testing.T) {
	storetest.RunPeople(t, func(t *testing.T) storetest.PeopleStore { return open(t, filepath.Join(t.TempDir(), "state.db")) },
		func(t *testing.T, s storetest.PeopleStore, q string) {
			if err := sqlite.ExecForTest(s.(*sqlite.Store), q); err != nil {
				t.Fatal(err)
			}
		})
}
