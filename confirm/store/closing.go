package store

import "context"

// ClosingAppender is implemented by stores that write a decision's closing
// journal events and its audit row in one transaction (both stores do): a
// bridge closing a decision stores its outcome event, the withdrawals from
// its hosts, the hand-over of its result to the agent (delivered) and the
// gate's audit row in one write, round trips fewer before its agent gets
// the result.
type ClosingAppender interface {
	// AppendClosing is [EventsAppender.AppendEvents] of evs (a delivered
	// event among them also sets the decision's DeliveredAt, as Append
	// does) and then [Store.InsertPlanItem] of it, in one transaction: all
	// of them are written or none.
	AppendClosing(ctx context.Context, id string, evs []Event, it PlanItem) error
}
