package main

import (
	"context"
	"fmt"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// stateStore is the decision store --state names, as the commands use it.
type stateStore interface {
	store.Store
	// Path is the SQLite file, or the PostgreSQL URL without its password.
	Path() string
	// Recovered is how many decisions a previous process left open and
	// the opening cancelled.
	Recovered() int
	Close() error
}

// stateConnectTimeout bounds connecting to and migrating a PostgreSQL
// --state at start.
const stateConnectTimeout = 30 * time.Second

// openState opens the store state names: a postgres:// or postgresql://
// URL (docs/inbox.md), else a SQLite file or :memory:, the default file
// when empty. Its errors never contain a password, and say what to do
// (another --state, or --state :memory:).
func openState(state string) (stateStore, error) { return openStateOr(state, ", or --state :memory:") }

// openStateOr is openState whose errors end their advice with other (""
// for a command that refuses :memory:, as acpmux inbox does, or that reads
// what a store already holds: audit, token, always, prune).
func openStateOr(state, other string) (stateStore, error) {
	if postgres.IsURL(state) {
		ctx, cancel := context.WithTimeout(context.Background(), stateConnectTimeout)
		defer cancel()
		st, err := postgres.Open(ctx, state)
		if err != nil {
			return nil, pgOpenError(state, err, "or choose another --state"+other) // state_pg.go
		}
		return st, nil
	}
	if state == "" {
		p, err := sqlite.DefaultPath()
		if err != nil {
			return nil, fmt.Errorf("--state: %w (pass --state PATH%s)", err, other)
		}
		state = p
	}
	st, err := sqlite.Open(state)
	if err != nil {
		return nil, fmt.Errorf("%w (choose another with --state%s)", err, other) // sqlite.Open's error names the file
	}
	return st, nil
}
