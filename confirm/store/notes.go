package store

import "context"

// Note is a journal entry another process left for the owner of a
// decision of a shared store (docs/inbox.md, "Who answered"): an answer it
// refused (an observer's, an invalid one), with the person. The owner
// journals Event with its own Seq.
type Note struct {
	DecisionID string
	Event      Event // Seq is ignored
}

// Notes carries journal entries from the process that received them to
// the bridge that owns the decision, which alone writes its journal. Both
// stores implement it; safe for concurrent use, also by several processes
// sharing one database.
type Notes interface {
	// AddNote stores ev for the owner of decision id (unknown ids store
	// nothing) and wakes its [Shared.Watch].
	AddNote(ctx context.Context, id string, ev Event) error
	// TakeNotes returns, oldest first, and deletes the notes for the
	// decisions of bridge bridgeID; none is an empty result.
	TakeNotes(ctx context.Context, bridgeID string) ([]Note, error)
}
