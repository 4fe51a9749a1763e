package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
)

// AppendClosing implements [store.ClosingAppender]: the chained inserts of
// evs and of the audit row, pipelined in one round trip and transaction
// (which it may share with other decisions' writes: group.go).
func (s *Store) AppendClosing(ctx context.Context, id string, evs []store.Event, it store.PlanItem) error {
	b := &pgx.Batch{}
	for _, ev := range evs {
		if ev.Type == store.EventDelivered {
			b.Queue(`UPDATE decisions SET delivered_at = COALESCE(delivered_at, $1) WHERE id = $2`, nanos(ev.At), id)
		}
		q, args := eventInsert(id, ev)
		b.Queue(chainedQuery(q, len(args)-1), args...)
	}
	q, args := planItemInsert(it)
	b.Queue(chainedQuery(q, len(args)-1), args...)
	if _, err := s.grouped(ctx, id, b); err != nil { // group.go
		return fmt.Errorf("store closing: %w", err)
	}
	return nil
}

var _ store.ClosingAppender = (*Store)(nil)
