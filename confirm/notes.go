package confirm

import (
	"context"

	"github.com/acpmux/acpmux/confirm/store"
)

// noteRefused leaves err, the refusal of an answer by (host@bridge, with
// the person of ctx) to decision id of another bridge, in the store for
// the owning bridge to journal as invalid_answer ([store.Notes]), and
// returns err. A store that keeps no notes, or a failing note, is only
// logged: the answer is refused either way.
func (b *Broker) noteRefused(ctx context.Context, id, by string, err error) error {
	n, ok := b.store.(store.Notes)
	if !ok {
		return err
	}
	ev := store.Event{At: b.now().UTC(), Type: store.EventInvalidAnswer, Host: by, Person: personName(ctx), Detail: err.Error()}
	if nerr := n.AddNote(context.WithoutCancel(ctx), id, ev); nerr != nil {
		b.log.Warn("confirm: cannot leave a refused answer for the bridge that asked", "decision", id, "err", nerr)
	}
	return err
}

// journalNotes journals, in this bridge's decisions, the notes other
// processes left for them (refused answers, with the person). A note of a
// decision no longer in memory is dropped with a log line.
func (b *Broker) journalNotes(ctx context.Context) {
	n, ok := b.store.(store.Notes)
	if !ok || b.opts.BridgeID == "" {
		return
	}
	notes, err := n.TakeNotes(ctx, b.opts.BridgeID)
	if err != nil {
		if ctx.Err() == nil {
			b.log.Warn("confirm: reading notes from other processes failed", "err", err)
		}
		return
	}
	for _, note := range notes {
		b.mu.Lock()
		d := b.byID[note.DecisionID]
		b.mu.Unlock()
		if d == nil {
			b.log.Warn("confirm: a note for a decision no longer in memory was dropped", "decision", note.DecisionID, "type", note.Event.Type, "person", note.Event.Person)
			continue
		}
		e := note.Event
		d.mu.Lock()
		ev := d.addPersonEvent(e.At, e.Type, e.Host, e.Person, e.Detail)
		d.mu.Unlock()
		b.persist(d, ev)
		b.log.Info("answer refused at another process", "decision", d.id, "host", e.Host, "person", e.Person, "detail", e.Detail)
	}
}
