package sqlite

import (
	"context"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationNotes records who answers through another process of a shared
// store: the person of the winning claim (decisions.resolved_person) and
// the journal notes another process leaves for a decision's owner
// (decision_notes; [store.Notes]).
const migrationNotes = `ALTER TABLE decisions ADD COLUMN resolved_person TEXT NOT NULL DEFAULT '';
	CREATE TABLE decision_notes (
		id          INTEGER PRIMARY KEY,
		decision_id TEXT NOT NULL,
		bridge_id   TEXT NOT NULL,
		at          INTEGER NOT NULL,
		type        TEXT NOT NULL,
		host        TEXT NOT NULL,
		person      TEXT NOT NULL DEFAULT '',
		detail      TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX decision_notes_by_bridge ON decision_notes (bridge_id, id);`

// AddNote implements [store.Notes]; the owner's Watch sees the commit
// (data_version).
func (s *Store) AddNote(ctx context.Context, id string, ev store.Event) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.w.ExecContext(ctx, `INSERT INTO decision_notes (decision_id, bridge_id, at, type, host, person, detail)
		SELECT id, bridge_id, ?, ?, ?, ?, ? FROM decisions WHERE id = ?`,
		nanos(ev.At), string(ev.Type), ev.Host, ev.Person, ev.Detail, id); err != nil {
		return fmt.Errorf("store add note: %w", err)
	}
	return nil
}

// TakeNotes implements [store.Notes]: one transaction.
func (s *Store) TakeNotes(ctx context.Context, bridgeID string) ([]store.Note, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store take notes: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT id, decision_id, at, type, host, person, detail FROM decision_notes
		WHERE bridge_id = ? ORDER BY id`, bridgeID)
	if err != nil {
		return nil, fmt.Errorf("store take notes: %w", err)
	}
	out := []store.Note{}
	var last int64
	for rows.Next() {
		var n store.Note
		var at int64
		var typ string
		if err := rows.Scan(&last, &n.DecisionID, &at, &typ, &n.Event.Host, &n.Event.Person, &n.Event.Detail); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store take notes: %w", err)
		}
		n.Event.At, n.Event.Type = fromNanos(at), store.EventType(typ)
		out = append(out, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store take notes: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM decision_notes WHERE bridge_id = ? AND id <= ?`, bridgeID, last); err != nil {
		return nil, fmt.Errorf("store take notes: %w", err)
	}
	return out, tx.Commit()
}

var _ store.Notes = (*Store)(nil)
