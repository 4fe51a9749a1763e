package sqlite

// ForgeOwnerForTest sets the owner tag s writes on new rows, to simulate a
// row of another process.
func ForgeOwnerForTest(s *Store, owner string) { s.owner = owner }
