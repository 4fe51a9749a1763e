package confirm

import (
	"encoding/json"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// ownerLostItem returns the audit function of the owner_lost sweep
// (store.Shared.LoseOwners), which closes at at the decisions of bridges
// that died: for a permission request, the audit row (plan item) its
// bridge would have written for a cancelled decision (docs/policy.md:
// every permission request becomes one plan item), built from the stored
// snapshot; none for a question (the gate's audit is for permissions) or
// a snapshot that cannot be read (logged).
func (b *Broker) ownerLostItem(at time.Time) func(store.Record) (store.PlanItem, bool) {
	return func(rec store.Record) (store.PlanItem, bool) {
		snap, err := snapshotOf(rec)
		if err != nil {
			b.log.Warn("confirm: cannot decode an owner_lost decision for its audit row", "decision", rec.ID, "err", err)
			return store.PlanItem{}, false
		}
		if snap.isQuestion() {
			return store.PlanItem{}, false
		}
		d := &Decision{id: rec.ID, snap: snap, created: rec.CreatedAt}
		t := transition{Status: store.StatusCancelled, Reason: store.ReasonOwnerLost, At: at}
		it := b.planItem(d, t, Resolution{Status: store.StatusCancelled, Reason: store.ReasonOwnerLost, At: at})
		doc, err := json.Marshal(it)
		if err != nil {
			b.log.Warn("confirm: cannot encode an owner_lost decision's audit row", "decision", rec.ID, "err", err)
			return store.PlanItem{}, false
		}
		return store.PlanItem{ID: it.ID, SessionID: it.SessionID, DecidedAt: it.DecidedAt, Item: doc}, true
	}
}
