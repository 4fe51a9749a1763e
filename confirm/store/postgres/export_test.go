package postgres

// SchemaVersion is the schema version this package migrates to.
var SchemaVersion = len(migrations)
