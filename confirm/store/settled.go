package store

import "context"

// SettledReader is implemented by a shared store whose [Shared.Watch] does
// not tell the instance that won a claim of the owner's delivery or
// refusal of its answer (PostgreSQL: that NOTIFY would wake every
// listening backend of the database), so that instance reads it instead,
// for all of its claims awaiting their owner in one query.
type SettledReader interface {
	// Settled returns, with their journals, the records of those of ids
	// that no longer await their owner: delivered (DeliveredAt set) or
	// closed with any status but [StatusAnswered] (refused as stale, or
	// owner_lost). The others, and unknown ids, are left out.
	Settled(ctx context.Context, ids []string) ([]Record, error)
}
