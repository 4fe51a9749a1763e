// Package postgres is the [store.Store] of acpmux on a PostgreSQL database
// (github.com/jackc/pgx/v5, a connection pool): the store for bridges on
// several machines sharing one approval inbox (--state postgres://…).
// [Open] applies the versioned schema migrations under an advisory lock,
// refuses a schema newer than it knows, and cancels the decisions a
// previous process of this host left open. The claim of a decision is one
// conditional UPDATE, so of any number of answers from any process or
// machine exactly one wins. See docs/inbox.md and docs/decisions.md,
// "Store".
package postgres
