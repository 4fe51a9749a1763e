package confirm

import (
	"context"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// auditOwnerLost writes the audit row (plan item) of each permission
// request in ids, which the owner_lost sweep closed at at: its bridge died
// before it could (docs/policy.md: every permission request becomes one
// plan item). The row is built from the stored snapshot, as the bridge
// would have built it for a cancelled decision; an existing row is kept.
func (b *Broker) auditOwnerLost(ctx context.Context, ids []string, at time.Time) {
	if b.store == nil {
		return
	}
	for _, id := range ids {
		rec, err := b.store.Get(ctx, id)
		if err != nil {
			b.log.Warn("confirm: cannot read an owner_lost decision for its audit row", "decision", id, "err", err)
			continue
		}
		snap, err := snapshotOf(rec)
		if err != nil {
			b.log.Warn("confirm: cannot decode an owner_lost decision for its audit row", "decision", id, "err", err)
			continue
		}
		if snap.isQuestion() {
			continue // the gate's audit is for permissions
		}
		d := &Decision{id: rec.ID, snap: snap, created: rec.CreatedAt}
		t := transition{Status: store.StatusCancelled, Reason: store.ReasonOwnerLost, At: at}
		item := b.planItem(d, t, Resolution{Status: store.StatusCancelled, Reason: store.ReasonOwnerLost, At: at})
		b.recordItem(item)
	}
}
