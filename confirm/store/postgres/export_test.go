package postgres

// SchemaVersion is the schema version this package migrates to.
var SchemaVersion = len(migrations)

// ParseNotice is parseNotice, for the tests of a notification's payload.
var ParseNotice = parseNotice
