package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// AppendClosing implements [store.ClosingAppender]: the chained inserts of
// evs and of the audit row (one chain_append: chainappend.go), pipelined
// in one round trip and transaction
// (which it may share with other decisions' writes: group.go).
func (s *Store) AppendClosing(ctx context.Context, id string, evs []store.Event, it store.PlanItem) error {
	b, chain := &pgx.Batch{}, &chainRows{}
	for _, ev := range evs {
		if ev.Type == store.EventDelivered {
			b.Queue(`UPDATE decisions SET delivered_at = COALESCE(delivered_at, $1) WHERE id = $2`, nanos(ev.At), id)
		}
		chain.event("event", id, ev)
	}
	chain.planItem(it)
	if _, err := s.grouped(ctx, id, b, chain); err != nil { // group.go
		return fmt.Errorf("store closing: %w", err)
	}
	return nil
}

var _ store.ClosingAppender = (*Store)(nil)
