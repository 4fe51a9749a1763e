package store

import "context"

// ClosingAppender is implemented by stores that write a decision's closing
// journal events and its audit row in one transaction (both stores do): a
// bridge closing a decision stores its outcome event, the withdrawals from
// its hosts and the gate's audit row in one write, one round trip fewer
// before its agent gets the result.
type ClosingAppender interface {
	// AppendClosing is [EventsAppender.AppendEvents] of evs (none of them
	// a delivered event) and then [Store.InsertPlanItem] of it, in one
	// transaction: all of them are written or none.
	AppendClosing(ctx context.Context, id string, evs []Event, it PlanItem) error
}
