package confirm

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/question"
)

// turnEnded lists the reasons after which the agent gets "cancelled" rather
// than a reject option: ACP requires "cancelled" once the client cancelled the
// turn, and a gone agent or request reads nothing anyway.
var turnEnded = map[store.Reason]bool{
	store.ReasonSessionCancelled: true,
	store.ReasonAgentCancelled:   true,
	store.ReasonAgentExited:      true,
	store.ReasonBridgeRestart:    true,
	store.ReasonBridgeShutdown:   true,
	store.ReasonAskCancelled:     true,
}

// Answer is a host's answer to a decision: an offered optionId, free text,
// or both. Text is accepted only when the decision allows free text; an
// answer with text and no optionId means "reject, with this feedback" and
// answers the agent with the fail-closed reject option. JSON field names are
// those of the decisions HTTP API.
type Answer struct {
	OptionID string `json:"optionId,omitempty"`
	Text     string `json:"text,omitempty"`
	// Scope is [policy.ScopeOnce] (or ""), [policy.ScopeSession] or [policy.ScopeAlways].
	Scope policy.Scope `json:"scope,omitempty"`
}

// repeats reports whether a is the same answer as won, the one that won a
// decision: the same optionId and text, and the same scope, "" and
// [policy.ScopeOnce] being one scope (the scope of an answer without one).
// Such an answer again is a retry, deduped, not a conflict.
func (a Answer) repeats(won Answer) bool {
	once := func(s policy.Scope) policy.Scope {
		if s == "" {
			return policy.ScopeOnce
		}
		return s
	}
	return a.OptionID == won.OptionID && a.Text == won.Text && once(a.Scope) == once(won.Scope)
}

// Resolution says how a decision closed and by whom. It is passed to
// [Presenter.Withdraw] and is the body of the _acpmux/permission_resolved
// notice.
type Resolution struct {
	Status   store.Status // terminal status
	OptionID string       // the winning optionId, or the fail-closed reject option sent to the agent, or ""
	Text     string       // free text of the winning answer, if any
	By       string       // host id of the winning answer; "" when the broker closed it
	Person   string       // the person of the winning answer (docs/tokens.md); "" when none
	Reason   store.Reason // why it closed
	At       time.Time    // when it closed
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
	// Kind is "question" for an elicitation/create; "" (omitted) for a
	// permission request.
	Kind                string                 `json:"kind,omitempty"`
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
	Gate *gate.Info `json:"gate,omitempty"`

	q *question.Question // a question's parsed params and schema (immutable), from Request
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
	status    store.Status
	claiming  bool // a transition is in flight (the in-memory compare-and-swap)
	res       Resolution
	result    json.RawMessage // the result for the agent, set when closed
	answer    *Answer
	qanswer   *question.Answer // a question's validated winning answer
	events    []store.Event
	hosts     map[string]*hostState
	order     []string // host ids in presentation order
	delivered bool
	votes     map[string]string // person → optionId, for a broker without a store.Votes (quorum.go)
	voided    map[string]bool   // people whose vote was dropped as revoked or expired, journalled once (quorum.go)
	timer     *time.Timer
	done      chan struct{} // closed once the decision is closed, its result set and the gate's after-close work done
	ready     chan struct{} // closed once the decision is stored (or failed to be)

	// deliveredStored: finish stored, with d's closing, the delivered
	// event the next deliver would store (close.go).
	deliveredStored bool
	// unwritten holds presented events not stored yet, and unwrittenTimer
	// stores them at the latest presentedWriteDelay after the first
	// (present.go).
	unwritten      []store.Event
	unwrittenTimer *time.Timer
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
func (d *Decision) Status() store.Status {
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
		v.AnsweredBy = d.res.Person
		at := d.res.At
		v.ClosedAt = &at
	}
	if d.answer != nil {
		a := *d.answer
		v.Answer = &a
	}
	v.Delivered = d.delivered
	v.Events = append([]store.Event(nil), d.events...)
	if d.snap.isQuestion() {
		questionView(&v, &d.snap, d.qanswer)
	}
	return v
}

// addEvent appends an event to the journal and returns it. d.mu must be held.
func (d *Decision) addEvent(at time.Time, typ store.EventType, host, detail string) store.Event {
	ev := store.Event{Seq: len(d.events) + 1, At: at, Type: typ, Host: host, Detail: detail}
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
