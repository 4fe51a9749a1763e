// Package store is the durable side of the confirmation broker: the
// [Store] interface the broker writes its decisions, journals and gate
// tables through, and the vocabulary of what it stores (statuses, reasons,
// journal event types). It holds no implementation; the SQLite one is
// package sqlite below it, and storetest is the conformance suite every
// implementation runs. See docs/decisions.md, "Store".
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/acpmux/acpmux/confirm/policy"
)

// Store keeps decisions, their journals, the gate's audit rows, ALWAYS
// verdicts and gate mode changes durably. The broker calls it outside its
// locks; an implementation must be safe for concurrent use, also by several
// processes sharing one database. Times are kept with nanosecond precision
// and returned in UTC. Every error other than [ErrNotFound] means the
// operation may not have happened; the broker then fails closed.
type Store interface {
	// Insert creates decision rec (whose Events hold the "opened" event)
	// with its events, in one transaction, unless a decision with rec.ID
	// exists. It returns the stored record and whether it was created now;
	// an existing record is returned unchanged, with its journal.
	Insert(ctx context.Context, rec Record) (Record, bool, error)
	// Claim moves decision id from [StatusOpen] to t.Status, records
	// t.Answer, t.By, t.Reason and t.At, and appends t.Event, all in one
	// transaction that is conditional on the status being open
	// (UPDATE … WHERE status = 'open', rows affected checked). Of any number
	// of concurrent claims of one decision, in this process or another,
	// exactly one wins. won is false, with a nil error, when the decision
	// was not open or does not exist; then nothing was written. A claim
	// that returns won = true is durable. A t.Event with Seq 0 is not
	// journalled: a process answering another bridge's decision leaves the
	// journal to the owning bridge, which records the answer in its own
	// sequence when it settles it ([Shared]). A won claim clears
	// DeliveredAt: a delivery stored while the row was still open (its
	// owner's closing failed to store) is not the delivery of this outcome.
	Claim(ctx context.Context, id string, t Transition) (won bool, err error)
	// Append adds ev to the journal of decision id; an event whose Seq is
	// already stored for id is ignored (no error). An [EventDelivered]
	// event also sets the decision's DeliveredAt (once: a later one keeps
	// the first time).
	Append(ctx context.Context, id string, ev Event) error
	// Get returns decision id with its journal in Seq order, or an error
	// wrapping [ErrNotFound].
	Get(ctx context.Context, id string) (Record, error)
	// List returns the newest limit decisions of sessionID, oldest first,
	// without their journals (Events nil); none is an empty result, not an
	// error.
	List(ctx context.Context, sessionID string, limit int) ([]Record, error)

	// Durable reports whether what is written survives the process (false
	// for an in-memory database). ALWAYS verdicts need a durable store.
	Durable() bool
	// InsertPlanItem writes one audit row. Rows are immutable: a second row
	// with the same ID is ignored (no error) and rows are never updated or
	// deleted.
	InsertPlanItem(ctx context.Context, it PlanItem) error
	// PlanItems returns the newest limit audit rows of sessionID (every
	// session when ""), oldest first (by DecidedAt, then insertion order).
	PlanItems(ctx context.Context, sessionID string, limit int) ([]PlanItem, error)
	// InsertRule stores an ALWAYS verdict, replacing one with the same Key.
	InsertRule(ctx context.Context, r Rule) error
	// Rules returns every stored ALWAYS verdict, oldest first.
	Rules(ctx context.Context) ([]Rule, error)
	// InsertModeEvent journals one gate mode change.
	InsertModeEvent(ctx context.Context, ev ModeEvent) error
}

// ErrNotFound is wrapped by [Store.Get] when there is no decision with the
// id.
var ErrNotFound = errors.New("decision not found")

// ErrSchemaTooNew is wrapped by an implementation's Open when the
// database's schema version is newer than this acpmux knows (a newer
// acpmux migrated it); the store is then not opened.
var ErrSchemaTooNew = errors.New("schema is newer than this acpmux knows")

// Record is the stored form of a decision.
type Record struct {
	ID        string
	BridgeID  string // the id of the bridge that opened it ("" before the bridges registry)
	SessionID string // ACP session id
	AgentKey  string // the key of the agent's request
	// Request is the exact params bytes of the agent's
	// session/request_permission, never re-encoded.
	Request []byte
	// Snapshot is the broker's immutable snapshot of the decision, a JSON
	// object the store keeps as it was given.
	Snapshot    json.RawMessage
	Status      Status
	CreatedAt   time.Time
	Deadline    time.Time
	Answer      *Answer // nil unless answered
	ResolvedBy  string  // winning host id, or the gate's decidedBy; "" when the broker closed it
	Person      string  // the person of the winning answer (docs/tokens.md), "" when none
	Reason      Reason  // "" while open
	ClosedAt    time.Time
	DeliveredAt time.Time // zero until the result was handed to the bridge
	Events      []Event
}

// Answer is the stored part of the winning answer: an offered optionId,
// free text, or both, and the scope it was given with.
type Answer struct {
	OptionID string
	Text     string
	// Scope is the answer's scope as given: "", ONCE, SESSION or ALWAYS
	// (docs/policy.md); "" too for an answer stored before the store
	// recorded scopes. What a store reads here never widens what an
	// answer from another process may do: those are ONCE.
	Scope string
}

// Transition is the one move of a decision out of [StatusOpen].
type Transition struct {
	Status Status  // a closed status
	Answer *Answer // nil unless answered
	By     string  // winning host id, or the gate's decidedBy; "" when the broker closed it
	Person string  // the person of the winning answer (docs/tokens.md), "" when none
	Reason Reason
	At     time.Time
	Event  Event // the terminal journal event, written in the same transaction
}

// PlanItem is one stored audit row: the fields the store selects on, and
// the row itself as the broker encoded it (a JSON object, kept as given).
type PlanItem struct {
	ID        string // the decision id
	SessionID string
	DecidedAt time.Time
	Item      json.RawMessage
}

// Rule is a remembered ALWAYS verdict: Decision for every later request of
// Agent with tool Kind and Target (command or title), in every session.
// Key is the broker's remember key of the three. JSON in camelCase.
type Rule struct {
	Key        string          `json:"key"`
	Agent      string          `json:"agent"`
	Kind       string          `json:"kind"`
	Target     string          `json:"target"`   // command or title
	Decision   policy.Decision `json:"decision"` // allow or deny
	DecisionID string          `json:"decisionId"`
	By         string          `json:"by"` // host id
	CreatedAt  time.Time       `json:"createdAt"`
}

// ModeEvent is one gate mode change of a session: to Mode ("plan" or
// "default") at revision Revision, by By (a host id, "agent", "flag" …).
type ModeEvent struct {
	SessionID string    `json:"sessionId"`
	At        time.Time `json:"at"`
	Mode      string    `json:"mode"`
	Revision  uint64    `json:"revision"`
	By        string    `json:"by"`
}
