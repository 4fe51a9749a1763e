package sqlite

import "testing"

// ForgeOwnerForTest sets the owner tag s writes on new rows, to simulate a
// row of another process.
func ForgeOwnerForTest(s *Store, owner string) { s.owner = owner }

// SetSchemaVersionForTest writes version into s's schema_version.
func SetSchemaVersionForTest(t *testing.T, s *Store, version int) {
	if _, err := s.db.Exec(`UPDATE schema_version SET version = ?`, version); err != nil {
		t.Fatal(err)
	}
}

// ExecForTest runs one SQL statement on s's database directly.
func ExecForTest(s *Store, q string) error {
	_, err := s.db.Exec(q)
	return err
}

// Migrations are the schema migrations, for tests that build an older
// database.
var Migrations = migrations
