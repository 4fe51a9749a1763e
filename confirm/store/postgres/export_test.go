package postgres

// SchemaVersion is the schema version this acpmux migrates to.
var SchemaVersion = len(migrations)
