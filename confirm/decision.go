package confirm

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/acpmux/acpmux/acp"
)

// Status is the state of a decision. A decision is created open and leaves
// open exactly once, for one of the three terminal statuses.
type Status string

// The statuses of a decision (docs/decisions.md, "Statuses").
const (
	StatusOpen      Status = "open"      // waiting for an answer
	StatusAnswered  Status = "answered"  // a host's valid answer won the claim
	StatusTimedOut  Status = "timed_out" // the deadline passed first
	StatusCancelled Status = "cancelled" // the turn, the request or the agent went away, or nobody can answer
)

// Closed reports whether s is a terminal status.
func (s Status) Closed() bool { return s != StatusOpen && s != "" }

// Reasons recorded with a closed decision (the "reason" of its view and of
// its terminal journal event). Reasons in turnEnded make the agent receive
// {"outcome":"cancelled"}; every other reason fails closed with an offered
// reject option.
const (
	ReasonAnswered         = "answered"          // a host answered
	ReasonTimeout          = "timeout"           // the deadline passed
	ReasonSessionCancelled = "session_cancelled" // session/cancel from a host, or the relay stopping (a signal, the IDE left)
	ReasonAgentCancelled   = "agent_cancelled"   // the agent's $/cancel_request for its request
	ReasonAgentExited      = "agent_exited"      // the agent process ended
	ReasonBridgeRestart    = "bridge_restart"    // left open by a previous acpmux process
	ReasonBridgeShutdown   = "bridge_shutdown"   // still open when Broker.Run's context ended
	ReasonNoEligibleHost   = "no_eligible_host"  // every host abstained, disconnected or answered invalidly
	ReasonStale            = "stale"             // the revalidation hook refused the snapshot
	ReasonStoreError       = "store_error"       // the store could not record the outcome
	ReasonAskCancelled     = "ask_cancelled"     // the context passed to Ask ended
)

// turnEnded lists the reasons after which the agent gets "cancelled" rather
// than a reject option: ACP requires "cancelled" once the client cancelled the
// turn, and a gone agent or request reads nothing anyway.
var turnEnded = map[string]bool{
	ReasonSessionCancelled: true,
	ReasonAgentCancelled:   true,
	ReasonAgentExited:      true,
	ReasonBridgeRestart:    true,
	ReasonBridgeShutdown:   true,
	ReasonAskCancelled:     true,
}

// Answer is a host's answer to a decision: an offered optionId, free text,
// or both. Text is accepted only when the decision allows free text; an
// answer with text and no optionId means "reject, with this feedback" and
// answers the agent with the fail-closed reject option. JSON field names are
// those of the decisions HTTP API.
type Answer struct {
	OptionID string `json:"optionId,omitempty"`
	Text     string `json:"text,omitempty"`
	// Scope is ONCE (or ""), SESSION or ALWAYS (scope.go).
	Scope string `json:"scope,omitempty"`
}

// Event is one entry of a decision's ordered journal. Seq starts at 1 and
// has no gaps; Host is the host id for host events and empty for the
// broker's own; Detail is a human-readable note (an optionId, a reason, a
// validation error).
type Event struct {
	Seq    int       `json:"seq"`
	At     time.Time `json:"at"`
	Type   string    `json:"type"`
	Host   string    `json:"host,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// The journal event types (docs/decisions.md, "Journal").
const (
	EventOpened        = "opened"         // the decision was created
	EventPresented     = "presented"      // shown to Host
	EventAnswered      = "answered"       // Host's answer won; Detail is the optionId
	EventInvalidAnswer = "invalid_answer" // Host's answer was refused; Detail says why
	EventLateAnswer    = "late_answer"    // Host answered after the decision closed or lost the claim
	EventAbstained     = "abstained"      // Host will not answer (disconnected, failed, answered cancelled)
	EventWithdrawn     = "withdrawn"      // Host's copy was withdrawn
	EventTimedOut      = "timed_out"      // the deadline passed
	EventCancelled     = "cancelled"      // closed without an answer; Detail is the reason
	EventDelivered     = "delivered"      // the result was handed to the bridge for the agent
)

// Resolution says how a decision closed and by whom. It is passed to
// Presenter.Withdraw and is the body of the _acpmux/permission_resolved
// notice.
type Resolution struct {
	Status   Status    // terminal status
	OptionID string    // the winning optionId, or the fail-closed reject option sent to the agent, or ""
	Text     string    // free text of the winning answer, if any
	By       string    // host id of the winning answer; "" when the broker closed it
	Reason   string    // one of the Reason constants
	At       time.Time // when it closed
}

// Classification is the shell-command class of a decision's command, as
// returned by Options.Classify ("read-only", "write", "unknown").
type Classification struct {
	Class   string   `json:"class"`
	Reasons []string `json:"reasons,omitempty"`
	// Diverges: bash may read the command differently from the
	// classifier's parse (classify.Verdict.Diverges); Class is then not
	// "read-only" and plan mode refuses the command without asking.
	Diverges bool `json:"diverges,omitempty"`
}

// Snapshot is the immutable record of what a decision asks: taken once when
// the decision opens, stored, and compared by the revalidation hook. Request
// is the exact params bytes of session/request_permission (never
// re-encoded); the hashes are lowercase hex SHA-256.
type Snapshot struct {
	SessionID           string                 `json:"sessionId"`
	AgentKey            string                 `json:"agentKey"`
	Request             json.RawMessage        `json:"-"`
	RequestSHA256       string                 `json:"requestSha256"`
	ToolCall            acp.ToolCallUpdate     `json:"toolCall"`
	Title               string                 `json:"title"`
	Command             string                 `json:"command,omitempty"`
	Classification      *Classification        `json:"classification,omitempty"`
	Warnings            []string               `json:"warnings"`
	Cwd                 string                 `json:"cwd"`
	ModeRevision        uint64                 `json:"modeRevision"`
	Options             []acp.PermissionOption `json:"options"`
	AllowFreeText       bool                   `json:"allowFreeText"`
	DisplayedText       string                 `json:"displayedText"`
	DisplayedTextSHA256 string                 `json:"displayedTextSha256"`
	// Gate is how the plan-mode gate and the policy routed the request
	// (plan.go); nil for snapshots stored before the gate existed.
	Gate *GateInfo `json:"gate,omitempty"`
}

// clone returns a deep copy of s so callers cannot alias the decision's.
func (s Snapshot) clone() Snapshot {
	c := s
	c.Request = append(json.RawMessage(nil), s.Request...)
	c.Options = append([]acp.PermissionOption(nil), s.Options...)
	c.Warnings = append([]string(nil), s.Warnings...)
	if s.Classification != nil {
		cl := *s.Classification
		cl.Reasons = append([]string(nil), cl.Reasons...)
		c.Classification = &cl
	}
	if s.Gate != nil {
		g := *s.Gate
		c.Gate = &g
	}
	return c
}

// Decision is one permission request of the agent, open until answered,
// timed out or cancelled. The same *Decision is passed to every Presenter;
// its methods are safe for concurrent use.
type Decision struct {
	id       string
	snap     Snapshot
	created  time.Time
	deadline time.Time

	mu        sync.Mutex // guards the fields below
	status    Status
	claiming  bool // a transition is in flight (the in-memory compare-and-swap)
	res       Resolution
	result    json.RawMessage // the result for the agent, set when closed
	answer    *Answer
	events    []Event
	hosts     map[string]*hostState
	order     []string // host ids in presentation order
	delivered bool
	timer     *time.Timer
	done      chan struct{} // closed when the decision is closed and result is set
	ready     chan struct{} // closed once the decision is stored (or failed to be)
}

// hostState is what the broker knows about one host's copy of a decision.
type hostState struct {
	p          Presenter
	presenting bool // Present is being called
	presented  bool
	abstained  bool
	withdrawn  bool
}

// ID returns the decision id: a UUIDv5 (RFC 9562) of the session id and the
// agent's request key, so that opening the same request twice gives the same
// decision.
func (d *Decision) ID() string { return d.id }

// SessionID returns the ACP session id of the decision.
func (d *Decision) SessionID() string { return d.snap.SessionID }

// AgentKey returns the key of the agent's request (Request.AgentKey).
func (d *Decision) AgentKey() string { return d.snap.AgentKey }

// Params returns the exact params bytes of the agent's
// session/request_permission. The caller must not modify them.
func (d *Decision) Params() json.RawMessage { return d.snap.Request }

// Options returns a copy of the offered permission options, in the agent's
// order. Hosts must be shown exactly these.
func (d *Decision) Options() []acp.PermissionOption {
	return append([]acp.PermissionOption(nil), d.snap.Options...)
}

// Snapshot returns a deep copy of the decision's immutable snapshot.
func (d *Decision) Snapshot() Snapshot { return d.snap.clone() }

// CreatedAt returns when the decision opened.
func (d *Decision) CreatedAt() time.Time { return d.created }

// Deadline returns when the decision times out if nobody answers.
func (d *Decision) Deadline() time.Time { return d.deadline }

// Status returns the current status.
func (d *Decision) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.status
}

// View returns the decision as the HTTP API shows it.
func (d *Decision) View() View {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := viewOf(d.id, d.snap, d.created, d.deadline)
	v.Status = d.status
	if d.status.Closed() {
		v.Reason = d.res.Reason
		v.ResolvedBy = d.res.By
		at := d.res.At
		v.ClosedAt = &at
	}
	if d.answer != nil {
		a := *d.answer
		v.Answer = &a
	}
	v.Delivered = d.delivered
	v.Events = append([]Event(nil), d.events...)
	return v
}

// addEvent appends an event to the journal and returns it. d.mu must be held.
func (d *Decision) addEvent(at time.Time, typ, host, detail string) Event {
	ev := Event{Seq: len(d.events) + 1, At: at, Type: typ, Host: host, Detail: detail}
	d.events = append(d.events, ev)
	return ev
}

// eligible reports whether some host may still answer. d.mu must be held.
func (d *Decision) eligible() bool {
	for _, h := range d.hosts {
		if (h.presenting || h.presented) && !h.abstained {
			return true
		}
	}
	return false
}
