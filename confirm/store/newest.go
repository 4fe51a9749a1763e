package store

import "context"

// SessionPair names one bridge's session in a shared store.
type SessionPair struct {
	BridgeID, SessionID string
}

// NewestReader reads the newest decision of many (bridge, session) pairs
// at once: the session list's working directory of every session of a
// store, which a process reads in full after it starts, in one query on
// PostgreSQL instead of a round trip per session ([Shared].ListOf with
// limit 1 each). Both stores implement it.
type NewestReader interface {
	// NewestOf returns, keyed by pair, the newest decision of each of
	// pairs that has one, as ListOf(pair.BridgeID, pair.SessionID, 1)
	// returns it (without its journal); a pair without decisions is left
	// out.
	NewestOf(ctx context.Context, pairs []SessionPair) (map[SessionPair]Record, error)
}
