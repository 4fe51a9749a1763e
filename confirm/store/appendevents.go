package store

import "context"

// EventsAppender is implemented by stores that append several journal
// events of one decision in one transaction (both stores do): a bridge
// settling an answer journals the answer and the withdrawals from its
// hosts in one write, so the chain head is taken once.
type EventsAppender interface {
	// AppendEvents is [Store.Append] of each of evs, in order, in one
	// transaction: all of them are written or none.
	AppendEvents(ctx context.Context, id string, evs []Event) error
}
