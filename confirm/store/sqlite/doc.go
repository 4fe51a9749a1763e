// Package sqlite is the [store.Store] of acpmux on an SQLite database
// (modernc.org/sqlite, pure Go): a file in WAL mode shared safely by several
// acpmux processes, or a database in memory ([MemoryPath]). [Open] applies
// the schema migrations and cancels the decisions a previous process left
// open. Only sqlite.go imports the SQLite driver. See docs/decisions.md,
// "Store".
package sqlite
