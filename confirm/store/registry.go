package store

import (
	"context"
	"time"
)

// Bridge is one acpmux process registered in a store that several bridges
// share (docs/inbox.md). JSON in camelCase.
type Bridge struct {
	ID        string    `json:"id"`        // unique in the store, chosen by the bridge
	Name      string    `json:"name"`      // a person's label for it (--name), may be ""
	Host      string    `json:"host"`      // the machine's host name
	Agent     []string  `json:"agent"`     // the agent's argv
	Cwd       string    `json:"cwd"`       // the bridge's working directory
	PID       int       `json:"pid"`       // the bridge's process id on Host
	Started   time.Time `json:"started"`   // when it started
	Heartbeat time.Time `json:"heartbeat"` // the latest sign of life
	// Stopped is when the bridge stopped cleanly (StopBridge); zero while
	// it runs, or when it died without stopping.
	Stopped time.Time `json:"stopped,omitzero"`
}

// Registry is the bridges table of a store: every bridge registers itself
// and heartbeats, so that the others can name it and tell when it is gone.
// Both stores implement it; safe for concurrent use, also by several
// processes sharing one database. Times keep nanoseconds and are returned
// in UTC.
type Registry interface {
	// RegisterBridge stores b, replacing the row with the same ID (its
	// Stopped too: a bridge registered again runs).
	RegisterBridge(ctx context.Context, b Bridge) error
	// StopBridge records that bridge id stopped cleanly at at: its
	// Stopped becomes at, and its Heartbeat at unless the stored one is
	// later. An unregistered id is an error wrapping [ErrNotFound].
	StopBridge(ctx context.Context, id string, at time.Time) error
	// Heartbeat sets the Heartbeat of bridge id to at, unless the stored
	// one is later (it never moves back). An unregistered id is an error
	// wrapping [ErrNotFound].
	Heartbeat(ctx context.Context, id string, at time.Time) error
	// Bridges returns every registered bridge, by Started then ID; none is
	// an empty result, not an error.
	Bridges(ctx context.Context) ([]Bridge, error)
	// LiveBridges returns the ids of the bridges that have not stopped and
	// whose Heartbeat is since or later, in any order: what tells which
	// bridges are live, read without the rest of every row.
	LiveBridges(ctx context.Context, since time.Time) ([]string, error)
}
