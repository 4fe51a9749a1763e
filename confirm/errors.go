package confirm

import (
	"errors"
	"fmt"

	"github.com/acpmux/acpmux/confirm/store"
)

// Errors returned by the Broker; callers branch on them with errors.Is. The
// HTTP API maps them to status codes (docs/decisions.md, "HTTP API"). Besides
// these: [store.ErrNotFound] when there is no decision with that id in that
// session (HTTP 404), [store.ErrDuplicateVote] when the person already voted
// on a quorum decision (the vote is journalled and not counted; HTTP 409),
// and [gate.ErrModeLocked], [policy.ErrScopeRefused] and
// [policy.ErrAlwaysUnavailable].
var (
	// ErrConflict: the decision was already answered differently, or is
	// closed (timed out, cancelled), or another answer won the claim first
	// (HTTP 409). The same answer again is not a conflict: it is deduped.
	ErrConflict = errors.New("decision already closed")
	// ErrStale: the revalidation hook refused the snapshot (mode changed,
	// session gone); the decision failed closed. Wrapped together with
	// ErrConflict, so errors.Is(err, ErrConflict) also holds (HTTP 409).
	ErrStale = errors.New("decision is stale")
	// ErrInvalidAnswer: the optionId was not offered (exact match), the
	// answer is empty, or it carries free text the decision does not allow.
	// The decision stays open (HTTP 400).
	ErrInvalidAnswer = errors.New("invalid answer")
)

// Errors no caller branches on; their text says what went wrong.
var (
	// errNotPresented: a host answered a decision that was never presented to
	// it, or that it had abstained from ("not yours").
	errNotPresented = errors.New("decision not presented to this host")
	// errInvalidTimeout: a decision timeout below 0 or above MaxTimeout.
	errInvalidTimeout = errors.New("invalid decision timeout")
)

// closedConflict returns ErrConflict for an answer to a decision already
// closed with status and reason (resolved by by, a host id, when
// answered), with one sentence for a person: "decision was already
// answered by stdio", "decision timed out", "decision was cancelled
// (agent_exited)".
func closedConflict(status store.Status, reason store.Reason, by string) error {
	var s string
	switch {
	case status == store.StatusAnswered && by != "":
		s = "decision was already answered by " + by
	case status == store.StatusAnswered:
		s = "decision was already answered"
	case status == store.StatusTimedOut:
		s = "decision timed out before this answer"
	case status == store.StatusCancelled:
		s = fmt.Sprintf("decision was cancelled (%s)", reason)
	default:
		s = fmt.Sprintf("decision is %s (%s)", status, reason)
	}
	return fmt.Errorf("%w: %s", ErrConflict, s)
}
