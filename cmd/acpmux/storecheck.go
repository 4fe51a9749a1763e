package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// errNotAStore is what existingStore returns for a database that holds no
// acpmux schema.
var errNotAStore = errors.New("not an acpmux store, or copied without its -wal file")

// errNoStore is what existingStore's error wraps when the SQLite file is
// not there.
var errNoStore = errors.New("no decision store")

// existingStore resolves state (the default file when empty) for a
// command that only reads or trims a store: the SQLite file must exist
// and, like a PostgreSQL database, already hold an acpmux schema, so that
// opening it does not create an empty store and report on that. It
// returns the resolved state, also with errNoStore when the SQLite file is
// not there and with errNotAStore when the database is there but holds no
// store.
func existingStore(state string) (string, error) {
	if state == "" {
		p, err := sqlite.DefaultPath()
		if err != nil {
			return "", err
		}
		state = p
	}
	if state == sqlite.MemoryPath {
		return state, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateConnectTimeout)
	defer cancel()
	var ok bool
	var err error
	if postgres.IsURL(state) {
		ok, err = postgres.IsStore(ctx, state)
	} else {
		if _, err := os.Stat(state); errors.Is(err, os.ErrNotExist) {
			return state, fmt.Errorf("%w at %s: acpmux run creates it; pass --state with the file or postgres:// URL it used", errNoStore, state)
		} else if err != nil {
			return "", fmt.Errorf("no decision store: %w", err)
		}
		ok, err = sqlite.IsStore(ctx, state)
	}
	if err != nil {
		return "", err
	}
	if !ok {
		return state, errNotAStore
	}
	return state, nil
}

// redactState is state as an error may show it: a PostgreSQL URL without
// its password.
func redactState(state string) string {
	if postgres.IsURL(state) {
		return postgres.Redact(state)
	}
	return state
}

// openExistingStore opens the store at state (the default file when
// empty) for a command that only reads or trims one: existingStore first,
// so nothing is created. A database that holds no store is
// errNotAStore, wrapped: "no decision store in STATE: not an acpmux
// store, …" (the state redacted).
func openExistingStore(state string) (stateStore, error) {
	state, err := existingStore(state)
	if errors.Is(err, errNotAStore) {
		return nil, fmt.Errorf("no decision store in %s: %w", redactState(state), err)
	}
	if err != nil {
		return nil, err
	}
	return openStateOr(state, "") // state.go: :memory: holds nothing to read
}
