package store

import (
	"context"
	"encoding/json"
	"time"
)

// FeedType is the kind of a [FeedEvent]: the SSE event name of
// GET /v1/events (docs/decisions.md, "Events").
type FeedType string

// The feed event types.
const (
	FeedDecisionOpened   FeedType = "decision.opened"   // a decision waits for an answer
	FeedDecisionAnswered FeedType = "decision.answered" // a host's answer won; followed by decision.closed
	FeedDecisionClosed   FeedType = "decision.closed"   // the decision closed (any status)
	FeedSessionStarted   FeedType = "session.started"   // the agent created a session
	FeedSessionEnded     FeedType = "session.ended"     // the session's bridge stopped (agent exit, shutdown)
)

// FeedEvent is one entry of the store's event feed, the durable source of
// GET /v1/events. ID is assigned by the store when the event is appended:
// it is positive and larger than every ID appended before it, by any
// process sharing the store, so a client that saw ID n resumes with the
// events after n. Data is a JSON object, kept as given. JSON in camelCase.
type FeedEvent struct {
	ID         int64     `json:"id"`
	At         time.Time `json:"at"`
	Type       FeedType  `json:"type"`
	SessionID  string    `json:"sessionId,omitempty"`
	DecisionID string    `json:"decisionId,omitempty"`
	// BridgeID is the id of the bridge whose relay wrote the event
	// ([Bridge].ID): which of the bridges sharing a store it is about,
	// since their agents choose session ids that may collide. Empty for
	// a store no other process shares, and for events written before
	// stores kept it.
	BridgeID string          `json:"bridgeId,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Feed is the event feed of a store. Both stores implement it; safe for
// concurrent use, also by several processes sharing one database. Times
// keep nanoseconds and are returned in UTC.
type Feed interface {
	// AppendFeed stores ev (its ID is ignored) and returns it with the ID
	// the store assigned.
	AppendFeed(ctx context.Context, ev FeedEvent) (FeedEvent, error)
	// FeedAfter returns up to limit events whose ID is larger than after,
	// in ID order; none is an empty result, not an error.
	FeedAfter(ctx context.Context, after int64, limit int) ([]FeedEvent, error)
	// LastFeedID returns the largest ID appended so far, 0 for none.
	LastFeedID(ctx context.Context) (int64, error)
}

// PruneResult counts what [Pruner.Prune] deleted.
type PruneResult struct {
	Decisions int `json:"decisions"` // closed decisions, each with its journal
	Feed      int `json:"feed"`      // feed events
	Bridges   int `json:"bridges"`   // bridges gone since before, with no decision left ([Registry])
}

// Pruner deletes old state (acpmux run --retain, acpmux prune;
// docs/decisions.md, "Retention"). Both stores implement it.
type Pruner interface {
	// Prune deletes, in one transaction, every closed decision whose
	// ClosedAt is before before, with its journal, its feed events and
	// the notes left for its owner that it never took ([Notes]: those of
	// a bridge that died; also any note whose decision is gone), and the
	// feed events of sessions (no DecisionID) older than before, and every
	// registered bridge ([Registry]) whose last heartbeat is before before
	// and that has no decision left in the store (the bridges that exited
	// or died that long ago: each start registers a new one, and every
	// heartbeat's sweep and every list of bridges reads them all).
	// It keeps open decisions whatever their age, the decision an ALWAYS
	// verdict ([Rule].DecisionID) was granted by, every audit row
	// ([PlanItem]: they are immutable), every [Rule] and mode event.
	Prune(ctx context.Context, before time.Time) (PruneResult, error)
}
