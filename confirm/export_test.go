package confirm

// ForgeOwnerForTest sets the owner tag s writes on new rows, to simulate a
// row of another process.
func ForgeOwnerForTest(s *SQLiteStore, owner string) { s.owner = owner }
