package postgres

// SchemaVersion is the schema version Open migrates to.
var SchemaVersion = len(migrations)
