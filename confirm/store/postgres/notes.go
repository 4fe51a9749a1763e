package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/acpmux/acpmux/confirm/store"
)

// migrationNotes records who answers through another process of a shared
// store: the person of the winning claim (decisions.resolved_person) and
// the journal notes another process leaves for a decision's owner
// (decision_notes; [store.Notes]).
const migrationNotes = `ALTER TABLE decisions ADD COLUMN resolved_person TEXT NOT NULL DEFAULT '';
	CREATE TABLE decision_notes (
		id          BIGSERIAL PRIMARY KEY,
		decision_id TEXT NOT NULL,
		bridge_id   TEXT NOT NULL,
		at          BIGINT NOT NULL,
		type        TEXT NOT NULL,
		host        TEXT NOT NULL,
		person      TEXT NOT NULL DEFAULT '',
		detail      TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX decision_notes_by_bridge ON decision_notes (bridge_id, id);`

// AddNote implements [store.Notes]: the insert and a NOTIFY of the
// decision's owner, in one transaction. The payload is "" (not the
// decision id), so the owner's watcher takes its notes: a change it cannot
// tell by id ([store.Shared.Watch]).
func (s *Store) AddNote(ctx context.Context, id string, ev store.Event) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store add note: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO decision_notes (decision_id, bridge_id, at, type, host, person, detail)
		SELECT id, bridge_id, $1, $2, $3, $4, $5 FROM decisions WHERE id = $6`,
		nanos(ev.At), string(ev.Type), ev.Host, ev.Person, ev.Detail, id); err != nil {
		return fmt.Errorf("store add note: %w", err)
	}
	if err := s.notifyOwner(ctx, tx, id, ""); err != nil { // watchchannels.go
		return fmt.Errorf("store add note: %w", err)
	}
	return tx.Commit(ctx)
}

// TakeNotes implements [store.Notes]: one DELETE … RETURNING, so two
// takers never get the same note.
func (s *Store) TakeNotes(ctx context.Context, bridgeID string) ([]store.Note, error) {
	rows, err := s.pool.Query(ctx, `DELETE FROM decision_notes WHERE bridge_id = $1
		RETURNING id, decision_id, at, type, host, person, detail`, bridgeID)
	if err != nil {
		return nil, fmt.Errorf("store take notes: %w", err)
	}
	defer rows.Close()
	type row struct {
		id int64
		n  store.Note
	}
	var got []row
	for rows.Next() {
		var r row
		var at int64
		var typ string
		if err := rows.Scan(&r.id, &r.n.DecisionID, &at, &typ, &r.n.Event.Host, &r.n.Event.Person, &r.n.Event.Detail); err != nil {
			return nil, fmt.Errorf("store take notes: %w", err)
		}
		r.n.Event.At, r.n.Event.Type = fromNanos(at), store.EventType(typ)
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store take notes: %w", err)
	}
	slices.SortFunc(got, func(a, b row) int { return cmp.Compare(a.id, b.id) })
	out := make([]store.Note, 0, len(got))
	for _, r := range got {
		out = append(out, r.n)
	}
	return out, nil
}

var _ store.Notes = (*Store)(nil)
