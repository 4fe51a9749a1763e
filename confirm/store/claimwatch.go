package store

import "context"

// ClaimWatcher is implemented by a shared store whose change notifications
// can carry the outcome a claim by another process stored (PostgreSQL's
// NOTIFY payload), so that the decision's owner settles it without
// reading the row back.
type ClaimWatcher interface {
	// WatchClaims is [Shared.Watch], passing with each change also the
	// outcome the change's own transaction wrote when it was a claim of a
	// decision of this instance: a Record with only ID, Status, Answer,
	// ResolvedBy, Person, Reason and ClosedAt set. claimed is nil for any
	// other change, and for a claim whose outcome did not fit or could
	// not be read from the notification: the caller then reads the row.
	WatchClaims(ctx context.Context, changed func(id string, claimed *Record)) error
}
