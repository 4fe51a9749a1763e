package store

import "time"

// Status is the state of a decision. A decision is created open and leaves
// open exactly once, for one of the three closed statuses.
type Status string

// The statuses of a decision (docs/decisions.md, "Statuses").
const (
	StatusOpen      Status = "open"      // waiting for an answer
	StatusAnswered  Status = "answered"  // a host's valid answer won the claim
	StatusTimedOut  Status = "timed_out" // the deadline passed first
	StatusCancelled Status = "cancelled" // the turn, the request or the agent went away, or nobody can answer
)

// Closed reports whether s is a closed status.
func (s Status) Closed() bool { return s != StatusOpen && s != "" }

// Reason says why a decision closed: the "reason" of its view and the
// Detail of its terminal journal event (docs/decisions.md, "Reasons").
type Reason string

// The reasons of a closed decision. After ReasonSessionCancelled,
// ReasonAgentCancelled, ReasonAgentExited, ReasonBridgeRestart,
// ReasonBridgeShutdown and ReasonAskCancelled the agent receives
// {"outcome":"cancelled"}; every other reason that is not an answer fails
// closed with an offered reject option.
const (
	ReasonAnswered         Reason = "answered"          // a host answered
	ReasonTimeout          Reason = "timeout"           // the deadline passed
	ReasonSessionCancelled Reason = "session_cancelled" // session/cancel from a host, or the relay stopping (a signal, the IDE left)
	ReasonAgentCancelled   Reason = "agent_cancelled"   // the agent's $/cancel_request for its request
	ReasonAgentExited      Reason = "agent_exited"      // the agent process ended
	ReasonBridgeRestart    Reason = "bridge_restart"    // left open by a previous acpmux process
	ReasonBridgeShutdown   Reason = "bridge_shutdown"   // still open when the broker's Run context ended
	ReasonNoEligibleHost   Reason = "no_eligible_host"  // every host abstained, disconnected or answered invalidly
	ReasonStale            Reason = "stale"             // the revalidation hook refused the snapshot
	ReasonStoreError       Reason = "store_error"       // the store could not record the outcome
	ReasonAskCancelled     Reason = "ask_cancelled"     // the context passed to the broker's Ask ended
	ReasonUnsupported      Reason = "unsupported"       // a question acpmux cannot serve (its schema, mode or URL): declined at once
	ReasonCompleted        Reason = "completed"         // the agent's elicitation/complete ended a URL-mode question still open

	// Reasons of decisions the plan-mode gate closed without a host
	// (docs/plan-mode.md).
	ReasonPolicyAllow Reason = "policy_allow"    // a rule (or builtin:plan-read-only, or a remembered verdict) allowed it
	ReasonPolicyDeny  Reason = "policy_deny"     // a rule (or a remembered verdict) denied it
	ReasonPlanBlock   Reason = "plan_block"      // plan mode blocked a write or an edit
	ReasonBreaker     Reason = "circuit_breaker" // the circuit breaker stopped the turn
)

// Event is one entry of a decision's ordered journal. Seq starts at 1 and
// has no gaps in the bridge's journal; the stored journal may lack, for up
// to a second, a presented event that waits for the decision's next write
// while a later event is stored (docs/decisions.md, "Journal"). Host is
// the host id for host events and empty for the broker's own; Detail is a
// human-readable note (an optionId, a reason, a validation error).
type Event struct {
	Seq    int       `json:"seq"`
	At     time.Time `json:"at"`
	Type   EventType `json:"type"`
	Host   string    `json:"host,omitempty"`
	Detail string    `json:"detail,omitempty"`
	// Person is the name of the authenticated person (the bearer token's
	// name, docs/tokens.md) whose answer or vote this event records; ""
	// for the broker's own events and for hosts without a person.
	Person string `json:"person,omitempty"`
}

// EventType is the kind of a journal [Event] (docs/decisions.md,
// "Journal").
type EventType string

// The journal event types.
const (
	EventOpened        EventType = "opened"         // the decision was created
	EventPresented     EventType = "presented"      // shown to Host
	EventAnswered      EventType = "answered"       // Host's answer won; Detail is the optionId
	EventInvalidAnswer EventType = "invalid_answer" // Host's answer was refused; Detail says why
	EventLateAnswer    EventType = "late_answer"    // Host answered after the decision closed or lost the claim
	EventAbstained     EventType = "abstained"      // Host will not answer (disconnected, failed, answered cancelled)
	EventWithdrawn     EventType = "withdrawn"      // Host's copy was withdrawn
	EventTimedOut      EventType = "timed_out"      // the deadline passed
	EventCancelled     EventType = "cancelled"      // closed without an answer; Detail is the reason
	EventDelivered     EventType = "delivered"      // the result was handed to the bridge for the agent
	EventVote          EventType = "vote"           // Person voted for an allow option of a quorum decision; Detail is "optionId (n of quorum)"
)
