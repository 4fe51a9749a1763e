package confirm

import (
	"context"
	"encoding/json"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/store"
)

// persistClosing stores the journal events evs of d's closing and, when
// the store writes both in one transaction ([store.ClosingAppender]), d's
// audit row item with them, reporting whether it did; otherwise (also when
// that write fails) it stores evs as persist does and reports false: the
// caller records the row.
func (b *Broker) persistClosing(d *Decision, item gate.PlanItem, evs []store.Event) bool {
	ca, ok := b.store.(store.ClosingAppender)
	if !ok {
		b.persist(d, evs...)
		return false
	}
	doc, err := json.Marshal(item)
	if err != nil {
		b.persist(d, evs...)
		return false
	}
	if err := ca.AppendClosing(context.Background(), d.id, evs,
		store.PlanItem{ID: item.ID, SessionID: item.SessionID, DecidedAt: item.DecidedAt, Item: doc}); err != nil {
		b.log.Warn("confirm: cannot store the closing journal events and audit row together; storing them apart", "decision", d.id, "events", len(evs), "err", err)
		b.persist(d, evs...)
		return false // the caller records the row alone
	}
	return true
}
