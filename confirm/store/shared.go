package store

import (
	"context"
	"time"
)

// ReasonOwnerLost closes, with status cancelled, an open decision whose
// bridge stopped heartbeating for longer than the lease (docs/inbox.md,
// "A bridge that dies"). Nobody answers it: its agent request is gone with
// the bridge, and a claim of a closed decision always loses.
const ReasonOwnerLost Reason = "owner_lost"

// Shared is what many bridges sharing one store need of it beyond [Store]
// and [Registry]: every bridge's decisions, keyed by bridge; the owner's
// view of answers other processes claimed; the owner_lost sweep; and a
// cheap signal that something changed. Both stores implement it; safe for
// concurrent use, also by several processes (and, on PostgreSQL, several
// machines).
type Shared interface {
	Store
	Registry
	// SessionsOf returns one row per (bridge, session) pair that has stored
	// decisions, by bridge then session id; none is an empty result. With
	// sessionID not "", only that session's rows (one per bridge that has
	// it), read through the session's own decisions: its cost is theirs,
	// not the store's history. The whole list reads an index of every
	// decision (bridge, session, created, status), not the rows (on
	// PostgreSQL, but for the pages vacuum has not marked all-visible).
	SessionsOf(ctx context.Context, sessionID string) ([]SessionRow, error)
	// ListOf is [Store.List] for the decisions of bridge bridgeID only
	// (bridgeID "" means every bridge's).
	ListOf(ctx context.Context, bridgeID, sessionID string, limit int) ([]Record, error)
	// Unsettled returns the ids of the decisions of bridge bridgeID that
	// are closed in the store but not yet delivered (DeliveredAt zero):
	// the ones another process claimed, which the owner must now settle.
	Unsettled(ctx context.Context, bridgeID string) ([]string, error)
	// Reclose moves decision id from [StatusAnswered], not yet delivered, to
	// t (the owner refused the answer another process claimed: a stale
	// snapshot), appending t.Event, in one conditional transaction. It
	// reports whether the row changed.
	Reclose(ctx context.Context, id string, t Transition) (bool, error)
	// LoseOwners closes, with status cancelled and reason
	// [ReasonOwnerLost] at time at, every decision whose bridge is
	// registered with a heartbeat before cutoff and that is open or holds
	// an answer claimed before cutoff and never delivered (the claim is
	// void: its answer is cleared), journalling a cancelled event, and
	// returns their ids. audit, when not nil, is called in the same
	// transaction with each closed decision's record (as closed, without
	// its journal) and returns its audit row (ok false: none), which is
	// inserted in that transaction too (an existing row of that id is
	// kept): a decision its dead bridge never closed gets the audit row
	// that bridge would have written, or stays open (docs/policy.md, "Audit").
	LoseOwners(ctx context.Context, cutoff, at time.Time, audit func(Record) (PlanItem, bool)) ([]string, error)
	// Watch calls changed (from one goroutine) soon after another process
	// claimed a decision this instance inserted, closed it as owner_lost or
	// left a note for it ([Notes]), or delivered or reclosed a decision
	// whose claim this instance won (not a [SettledReader], whose claimer
	// reads those), and perhaps at other times (other
	// changes), with the decision's id, or "" when the store cannot tell
	// which decisions changed (then the caller looks at all of its own,
	// and takes its notes); it returns when ctx ends (nil) or the watch
	// fails. SQLite polls PRAGMA data_version every [WatchInterval] (id
	// ""); PostgreSQL LISTENs on a channel of this instance's own, which
	// a claim, a lost owner or a note NOTIFYs (with the id; "" for a
	// note), so a change wakes only the process it concerns.
	Watch(ctx context.Context, changed func(id string)) error
}

// WatchInterval is how often the SQLite store's [Shared.Watch] checks the
// database for a change another process committed.
const WatchInterval = 20 * time.Millisecond

// SessionRow is one session of one bridge in a shared store.
type SessionRow struct {
	BridgeID      string
	SessionID     string
	OpenDecisions int
	Decisions     int
	LastActivity  time.Time // the newest decision's CreatedAt
}
