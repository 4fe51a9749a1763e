package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// AppendClosing implements [store.ClosingAppender]: the chained inserts of
// evs and of the audit row in one transaction.
func (s *Store) AppendClosing(ctx context.Context, id string, evs []store.Event, it store.PlanItem) error {
	content := store.ChainContent(store.ChainPlanItems, it.ID, it.SessionID, nanos(it.DecidedAt), string(it.Item))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, ev := range evs {
			if err := insertEvent(ctx, tx, id, ev); err != nil {
				return err
			}
			if ev.Type != store.EventDelivered {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE decisions SET delivered_at = COALESCE(delivered_at, ?) WHERE id = ?`,
				nanos(ev.At), id); err != nil {
				return err
			}
		}
		_, err := chainedInsert(ctx, tx, content, `INSERT INTO plan_items (id, session_id, decided_at, item,
			chain_seq, chain_prev, chain_hash) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			it.ID, it.SessionID, nanos(it.DecidedAt), string(it.Item))
		return err
	})
	if err != nil {
		return fmt.Errorf("store closing: %w", err)
	}
	return nil
}

var _ store.ClosingAppender = (*Store)(nil)
