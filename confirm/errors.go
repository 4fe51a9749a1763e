package confirm

import (
	"errors"

	"github.com/acpmux/acpmux/confirm/store"
)

// Errors returned by the Broker; callers branch on them with errors.Is. The
// HTTP API maps them to status codes (docs/decisions.md, "HTTP API").
var (
	// ErrNotFound: no decision with that id in that session (HTTP 404).
	ErrNotFound = store.ErrNotFound
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
	// ErrNotPresented: a host answered a decision that was never presented to
	// it, or that it had abstained from ("not yours").
	ErrNotPresented = errors.New("decision not presented to this host")
	// ErrInvalidTimeout: a decision timeout below 0 or above MaxTimeout.
	ErrInvalidTimeout = errors.New("invalid decision timeout")
)
