package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"

	"github.com/acpmux/acpmux/acp"
	"github.com/google/uuid"
)

// Presenter is a host that can be shown a decision: a bridge host (the stdio
// IDE, a WebSocket client) or the HTTP API. Its methods are called without
// the broker's locks held; they should return quickly (a bridge host only
// enqueues) and must not call back into the Broker synchronously.
type Presenter interface {
	// HostID returns the host's id, unique among the bridge's hosts and
	// stable for the host's connection. It names the host in the journal.
	HostID() string
	// Present shows d to the host with exactly d.Options(). The host's answer
	// comes back through [Broker.AnswerResult] or [Broker.Answer]; a host that
	// disconnects or fails calls [Broker.Abstain]. An error counts as the host
	// abstaining.
	Present(d *Decision) error
	// Withdraw tells a host whose answer did not win that d is closed: the
	// bridge sends $/cancel_request for the host's copy plus an
	// _acpmux/permission_resolved notification ([Notice]); res says how it
	// ended and by whom.
	Withdraw(d *Decision, res Resolution)
	// Won tells the host whose answer closed d that its answer is the one
	// delivered: the bridge sends it the _acpmux/permission_resolved
	// notification ([Notice]) alone. It is called once, after the host's
	// Present has returned (also when the answer came before that).
	Won(d *Decision, res Resolution)
}

// Options configure a Broker. The zero value is usable: no store, the
// default timeout, 512 open decisions per session and 4096 in all.
type Options struct {
	// Store keeps decisions durably. Nil keeps them in memory only.
	Store store.Store
	// DefaultTimeout is the timeout of a decision whose Request.Timeout is 0.
	// 0 means DefaultTimeout (5m); it must pass CheckTimeout.
	DefaultTimeout time.Duration
	// MaxOpenPerSession bounds the open decisions of one session in memory;
	// a request beyond it fails closed without opening a decision. 0 means 512.
	MaxOpenPerSession int
	// MaxOpen bounds the open decisions of all sessions together (the
	// --max-open-decisions flag); a request beyond it fails closed without
	// opening a decision. 0 means DefaultMaxOpen.
	MaxOpen int
	// AutoApprove answers, for runs nobody watches (acpmux run
	// --auto-approve allow_once), every decision routed to ask with its
	// offered allow_once option, journalled as answered by
	// "acpmux:auto-approve". Never an exact one-off prompt (plan mode: no human
	// saw its warning; with no host it is refused with
	// [gate.AutoApproveRefusedMessage]), and never when allow_once is not
	// offered (an unoffered persistent choice never becomes a one-time
	// one: the hosts are asked as usual).
	AutoApprove bool
	// KeepClosedPerSession is how many closed decisions per session stay in
	// memory for views; older ones are read from the Store. 0 means 256.
	KeepClosedPerSession int
	// Logger receives the broker's log lines. Nil means slog.Default().
	Logger *slog.Logger
	// Now returns the current time (tests). Nil means time.Now.
	Now func() time.Time
	// Classify returns the classification of a shell command: its class
	// ("read-only", "write", "unknown"), reasons and whether bash may read
	// it differently from the classifier (Diverges; plan mode then refuses
	// it without asking). Nil means commands are not classified. A panic
	// becomes class "unknown".
	Classify func(command string) Classification
	// Revalidate is called after a host's answer won the in-memory claim and
	// before it is committed, unless the chosen option is a reject option,
	// once [Sessions.SessionAlive] said yes. A non-nil error fails the
	// decision closed with reason stale. Nil means no further check.
	Revalidate func(ctx context.Context, s Snapshot) error

	// Mode is the gate mode every session starts in (--mode); "" means
	// [gate.ModeDefault]. LockMode keeps every session there (--lock-mode).
	Mode     gate.Mode
	LockMode bool
	// Policy is the initial policy (--policy); nil has no rules. See SetPolicy.
	Policy *policy.Policy
	// Agent names the agent for policy rules' agent matcher and remembered
	// verdicts (the base name of the agent command).
	Agent string
	// Breaker configures the circuit breaker; it cancels turns through the
	// [Sessions] given to [Broker.UseSessions] and is off without them.
	Breaker Breaker
	// Metrics receives counts of decisions and store errors; nil counts
	// nothing.
	Metrics Metrics
	// BridgeID is this bridge's id in a store several bridges share
	// (docs/inbox.md): it is written on every decision this broker opens,
	// and the decisions of other bridges in the store are answered as
	// theirs (see [Broker.RunShared]). "" for a broker of its own store and
	// for acpmux inbox.
	BridgeID string
	// Inbox makes a broker with no agent of its own (acpmux inbox) list and
	// answer every bridge's decisions in its shared store. Without it and
	// without a BridgeID the store is the broker's own.
	Inbox bool
	// OnOpen is called once for each decision that waits for an answer,
	// after it is stored and its timer started, from the goroutine of Ask
	// and without the broker's locks; it must not block. Nil does nothing.
	// See [Decision.Done].
	OnOpen func(d *Decision)
}

// Default limits of a Broker.
const (
	defaultMaxOpenPerSession    = 512
	DefaultMaxOpen              = 4096
	defaultKeepClosedPerSession = 256
)

// Broker turns the agent's permission requests into decisions, presents
// them to hosts, takes the first valid answer and answers the agent. All
// methods are safe for concurrent use.
type Broker struct {
	opts  Options
	store store.Store
	log   *slog.Logger
	now   func() time.Time

	shared    sharedState // the other bridges of a shared store (shared.go)
	mu        sync.Mutex  // guards sessions, byID, openTotal, stopped, gone, sess
	sessions  map[string]*session
	sess      Sessions // the bridge's sessions (UseSessions), or nil
	byID      map[string]*Decision
	openTotal int // decisions in the open sets of all sessions
	stopped   bool
	gone      bool           // AgentExited was called
	inflight  sync.WaitGroup // timer callbacks running
	g         gateState      // plan-mode gate, policy, audit (mode.go)
}

// session is the broker's state of one ACP session. Guarded by Broker.mu.
type session struct {
	id     string
	cwd    string
	open   map[string]*Decision
	closed []*Decision // most recent last
	tools  toolCalls
	last   time.Time
}

// NewBroker returns a broker with opts. It starts nothing; see Run. It fails
// when opts.DefaultTimeout is out of range (see [CheckTimeout]) or a limit
// is negative.
func NewBroker(opts Options) (*Broker, error) {
	if err := CheckTimeout(opts.DefaultTimeout); err != nil {
		return nil, fmt.Errorf("new broker: %w", err)
	}
	if opts.MaxOpenPerSession < 0 || opts.MaxOpen < 0 || opts.KeepClosedPerSession < 0 {
		return nil, errors.New("new broker: negative limit")
	}
	if opts.DefaultTimeout == 0 {
		opts.DefaultTimeout = DefaultTimeout
	}
	if opts.MaxOpenPerSession == 0 {
		opts.MaxOpenPerSession = defaultMaxOpenPerSession
	}
	if opts.MaxOpen == 0 {
		opts.MaxOpen = DefaultMaxOpen
	}
	if opts.KeepClosedPerSession == 0 {
		opts.KeepClosedPerSession = defaultKeepClosedPerSession
	}
	b := &Broker{opts: opts, store: opts.Store, log: opts.Logger, now: opts.Now,
		sessions: make(map[string]*session), byID: make(map[string]*Decision),
		g: gateState{sessions: map[string]*gateSession{}, policy: opts.Policy, always: map[string]store.Rule{}}}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.now == nil {
		b.now = time.Now
	}
	return b, nil
}

// decisionNamespace is the UUIDv5 namespace of decision ids.
var decisionNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/acpmux/acpmux/decision"))

// DecisionID returns the id of the decision for the agent request agentKey
// of session sessionID: the UUIDv5 (RFC 9562 §5.5) of sessionID, a NUL byte
// and agentKey, in its 36-character text form.
func DecisionID(sessionID, agentKey string) string {
	return uuid.NewSHA1(decisionNamespace, []byte(sessionID+"\x00"+agentKey)).String()
}

// Ask opens the decision for req (idempotently: the same SessionID and
// AgentKey give the same decision, and a second Ask waits for the same
// outcome), presents it to every presenter in hosts, and blocks until it
// closes. It returns the JSON result the bridge sends to the agent, built by
// the broker from validated fields: {"outcome":{"outcome":"selected",
// "optionId":X}} or {"outcome":{"outcome":"cancelled"}}.
//
// Errors: one wrapping acp.ErrInvalidParams (-32602) for an invalid request
// (no options, duplicate or empty optionIds, malformed params) — no decision
// is opened; acp.ErrInvalidRequest (-32600) when AgentKey was already used
// with different params; acp.ErrRequestCancelled (-32800) when the agent
// cancelled the request (CancelRequest); [CheckTimeout]'s error for an
// out-of-range Timeout; context.Cause(ctx) when ctx ended first (the
// decision is then cancelled with reason ask_cancelled).
//
// Fail closed: timeout, no eligible host (hosts empty, all abstained,
// disconnected or answered invalidly), a store error, a stale snapshot or
// MaxOpenPerSession open decisions in the session or MaxOpen in all give
// an offered reject_once, else
// reject_always, else "cancelled"; session/cancel and agent exit give
// "cancelled". See ACP "Tool Calls / Requesting Permission".
func (b *Broker) Ask(ctx context.Context, req Request, hosts []Presenter) (json.RawMessage, error) {
	d, result, err := b.open(ctx, req)
	if d == nil {
		return result, err
	}
	if !b.decideByGate(d, len(hosts)) {
		b.presentAll(d, hosts)
		b.checkEligible(d)
	}
	if b.agentExited() { // opened while AgentExited ran: nobody can use the answer
		b.close(d, store.StatusCancelled, store.ReasonAgentExited, "")
	}
	select {
	case <-d.done:
	case <-ctx.Done():
		b.close(d, store.StatusCancelled, store.ReasonAskCancelled, context.Cause(ctx).Error())
		<-d.done
	}
	return b.deliver(ctx, d)
}

// deliver journals the hand-over of d's result and returns it, or the error
// the agent gets instead.
func (b *Broker) deliver(ctx context.Context, d *Decision) (json.RawMessage, error) {
	d.mu.Lock()
	res, result := d.res, d.result
	stored := d.deliveredStored // the closing write stored it (finish)
	d.deliveredStored = false
	var ev store.Event
	if !stored {
		ev = d.addEvent(b.now().UTC(), store.EventDelivered, "", deliveredDetail(res, result))
	}
	d.delivered = true
	d.mu.Unlock()
	if !stored {
		b.persist(d, ev)
	}
	switch res.Reason {
	case store.ReasonAgentCancelled:
		return nil, fmt.Errorf("%w: the agent cancelled its request of decision %s", acp.ErrRequestCancelled, d.id)
	case store.ReasonAskCancelled:
		return nil, fmt.Errorf("ask: %w", context.Cause(ctx))
	}
	return result, nil
}

// deliveredDetail is the detail of the delivered event of a decision
// closed with res and result: the result the agent gets, or what it gets
// instead.
func deliveredDetail(res Resolution, result json.RawMessage) string {
	switch res.Reason {
	case store.ReasonAgentCancelled:
		return "error -32800"
	case store.ReasonAskCancelled:
		return "nothing: the caller's context ended"
	}
	return string(result)
}

// open finds or creates the decision of req. It returns a nil decision with
// a result when the request failed closed without one (too many open), or
// with an error.
func (b *Broker) open(ctx context.Context, req Request) (*Decision, json.RawMessage, error) {
	sid, tc, opts, err := parseRequest(req)
	if err != nil {
		return nil, nil, err
	}
	if req.AgentKey == "" {
		return nil, nil, fmt.Errorf("%w: confirm: Request.AgentKey is empty", acp.ErrInternal)
	}
	timeout := req.Timeout
	if err := CheckTimeout(timeout); err != nil {
		return nil, nil, err
	}
	if timeout == 0 {
		timeout = b.opts.DefaultTimeout
	}
	id := DecisionID(sid, req.AgentKey)
	snap, d, err := b.prepare(ctx, id, sid, tc, req)
	if d != nil || err != nil {
		return d, nil, err
	}
	snap.Options = opts
	if req.Relayed != nil {
		relaySnapshot(&snap, *req.Relayed)
		if snap.DisplayedTextSHA256 != req.Relayed.DisplayedTextSHA256 {
			return nil, nil, fmt.Errorf("%w: relayed decision: displayed text hashes to %s, not %s", acp.ErrInvalidParams, snap.DisplayedTextSHA256, req.Relayed.DisplayedTextSHA256)
		}
	} else {
		b.finishSnapshot(&snap)
	}
	b.routeSnapshot(&snap, req.Producer)
	snap.Gate.Requester = req.Requester
	return b.create(ctx, id, snap, timeout)
}

// prepare returns the existing decision id, or the snapshot of a new one
// with the tool call merged with the session's latest state of it.
func (b *Broker) prepare(ctx context.Context, id, sid string, tc acp.ToolCallUpdate, req Request) (Snapshot, *Decision, error) {
	b.mu.Lock()
	d := b.byID[id]
	s := b.session(sid)
	if req.Cwd != "" {
		s.cwd = req.Cwd
	}
	if d == nil {
		tc = s.tools.latest(tc)
	}
	b.mu.Unlock()
	if d != nil {
		if err := b.sameRequest(ctx, d, req.Params); err != nil {
			return Snapshot{}, nil, err
		}
		return Snapshot{}, d, nil
	}
	return Snapshot{SessionID: sid, AgentKey: req.AgentKey, Request: append(json.RawMessage(nil), req.Params...),
		RequestSHA256: sha256Hex(req.Params), ToolCall: tc, Cwd: req.Cwd, ModeRevision: req.ModeRevision,
		AllowFreeText: req.AllowFreeText}, nil, nil
}

// sameRequest waits until d is ready and checks that params are the bytes
// it was opened with.
func (b *Broker) sameRequest(ctx context.Context, d *Decision, params json.RawMessage) error {
	select {
	case <-d.ready:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	if sha256Hex(params) != d.snap.RequestSHA256 {
		return fmt.Errorf("%w: request key %q reused with different params", acp.ErrInvalidRequest, d.snap.AgentKey)
	}
	return nil
}

// finishSnapshot fills the derived, displayed fields of s.
func (b *Broker) finishSnapshot(s *Snapshot) {
	if s.ToolCall.Title != nil {
		s.Title = *s.ToolCall.Title
	}
	if s.Title == "" {
		s.Title = "Permission request"
	}
	s.Command = shellCommand(s.ToolCall)
	s.Warnings = []string{}
	var warn string
	s.Classification, warn = classify(b.opts.Classify, s.Command)
	if warn != "" {
		s.Warnings = append(s.Warnings, warn)
	}
	s.Warnings = append(s.Warnings, hiddenWarnings(s.Title, s.Command)...)
	s.DisplayedText = displayedText(s)
	s.DisplayedTextSHA256 = sha256Hex([]byte(s.DisplayedText))
}

// relaySnapshot fills the displayed fields of s from r, verbatim.
func relaySnapshot(s *Snapshot, r Relayed) {
	s.Title, s.Command = r.Title, r.Command
	if r.Classification != nil {
		c := *r.Classification
		c.Reasons = append([]string(nil), c.Reasons...)
		s.Classification = &c
	}
	s.Warnings = append([]string{}, r.Warnings...)
	s.DisplayedText = displayedText(s)
	s.DisplayedTextSHA256 = sha256Hex([]byte(s.DisplayedText))
}

// create registers a new decision in memory, then in the store, then starts
// its timer. A concurrent create of the same id yields the first decision.
func (b *Broker) create(ctx context.Context, id string, snap Snapshot, timeout time.Duration) (*Decision, json.RawMessage, error) {
	now := b.now().UTC()
	d := &Decision{id: id, snap: snap, created: now, deadline: now.Add(timeout), status: store.StatusOpen,
		hosts: make(map[string]*hostState), done: make(chan struct{}), ready: make(chan struct{})}
	opened := d.addEvent(now, store.EventOpened, "", fmt.Sprintf("timeout %v", timeout))
	b.mu.Lock()
	if old := b.byID[id]; old != nil {
		b.mu.Unlock()
		if err := b.sameRequest(ctx, old, snap.Request); err != nil {
			return nil, nil, err // never the old decision's answer for other params
		}
		return old, nil, nil
	}
	s := b.session(snap.SessionID)
	if b.stopped || len(s.open) >= b.opts.MaxOpenPerSession || b.openTotal >= b.opts.MaxOpen {
		stopped, n, total := b.stopped, len(s.open), b.openTotal
		b.mu.Unlock()
		return b.refuse(snap, stopped, n, total)
	}
	b.byID[id] = d
	s.open[id] = d
	b.openTotal++
	b.mu.Unlock()
	defer close(d.ready)
	if b.store != nil {
		rec, err := recordOf(d, opened)
		rec.BridgeID = b.opts.BridgeID
		created := false
		if err == nil {
			_, created, err = b.store.Insert(context.WithoutCancel(ctx), rec)
		}
		if err != nil || !created {
			if err == nil {
				err = errors.New("decision id already in the store")
			}
			b.log.Error("confirm: cannot store decision; failing closed", "decision", id, "session", snap.SessionID, "err", err)
			b.countStoreError("insert")
			d.mu.Lock()
			d.claiming = true
			d.mu.Unlock()
			b.commit(d, transition{Status: store.StatusCancelled, Reason: store.ReasonStoreError}, err.Error(), false)
			return d, nil, nil
		}
	}
	b.startTimer(d, timeout)
	b.log.Info("decision opened", "decision", id, "session", snap.SessionID, "route", snap.route(), "title", snap.Title)
	if b.opts.OnOpen != nil {
		b.opts.OnOpen(d)
	}
	return d, nil, nil
}

// refuse answers a request that could not open a decision, failing closed.
func (b *Broker) refuse(snap Snapshot, stopped bool, open, total int) (*Decision, json.RawMessage, error) {
	if stopped {
		return nil, buildResult("", ""), nil
	}
	if open >= b.opts.MaxOpenPerSession {
		b.log.Warn("confirm: too many open decisions in session; failing closed without opening a decision",
			"session", snap.SessionID, "open", open, "max", b.opts.MaxOpenPerSession, "agentKey", snap.AgentKey)
	} else {
		b.log.Warn("confirm: too many open decisions in all sessions (--max-open-decisions); failing closed without opening a decision",
			"session", snap.SessionID, "open", total, "max", b.opts.MaxOpen, "agentKey", snap.AgentKey)
	}
	return nil, buildResult(rejectOption(snap.Options), ""), nil
}

// RefuseUnknownSession answers a permission request of a session that no
// host created, loaded, resumed or attached to: no decision is opened and
// nothing is presented or stored; the result is the offered reject_once,
// else reject_always, else "cancelled", as for any request that fails
// closed, and a log line names the session. An invalid request gets the
// same errors as from Ask (acp.ErrInvalidParams). Safe for concurrent use.
func (b *Broker) RefuseUnknownSession(req Request) (json.RawMessage, error) {
	sid, _, opts, err := parseRequest(req)
	if err != nil {
		return nil, err
	}
	b.log.Debug("confirm: permission request for a session no host created or attached to; failing closed without opening a decision",
		"session", sid, "agentKey", req.AgentKey)
	return buildResult(rejectOption(opts), ""), nil
}

// session returns the state of session id, creating it. b.mu must be held.
func (b *Broker) session(id string) *session {
	s := b.sessions[id]
	if s == nil {
		s = &session{id: id, open: make(map[string]*Decision)}
		b.sessions[id] = s
	}
	s.last = b.now().UTC()
	return s
}

// TrackSession records the working directory of session sessionID so that
// Sessions lists it before its first decision. The bridge calls it on
// session/new, session/load and session/resume results.
func (b *Broker) TrackSession(sessionID, cwd string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.session(sessionID).cwd = cwd
}

// ToolCallUpdate merges one session/update `update` object of session
// sessionID (ACP "Tool Calls"): "tool_call" and "tool_call_update" updates
// update the latest state of their toolCallId, which later permission
// requests for that tool call are merged with; other updates are ignored.
// The bridge calls it for every such update, in order. An update that
// changes the arguments of a tool call with an open decision fails that
// decision closed as stale ([gate.StaleApprovalMessage]).
func (b *Broker) ToolCallUpdate(sessionID string, update json.RawMessage) {
	b.mu.Lock()
	b.session(sessionID).tools.apply(update)
	b.mu.Unlock()
	b.argsChanged(sessionID, update)
}

// persist appends evs to d's stored journal, after the presented events d
// kept for its next write (deferPresented); a failure is logged, since the
// journal in memory stays complete and only the terminal claim decides.
func (b *Broker) persist(d *Decision, evs ...store.Event) {
	if b.store == nil {
		return
	}
	d.mu.Lock()
	if kept := d.takeUnwritten(); len(kept) > 0 {
		evs = append(kept, evs...)
	}
	d.mu.Unlock()
	if len(evs) == 0 {
		return
	}
	if ea, ok := b.store.(store.EventsAppender); ok && len(evs) > 1 { // store/appendevents.go
		if err := ea.AppendEvents(context.Background(), d.id, evs); err != nil {
			b.log.Warn("confirm: cannot store journal events", "decision", d.id, "events", len(evs), "first", evs[0].Type, "err", err)
			b.countStoreError("append")
		}
		return
	}
	for _, ev := range evs {
		if err := b.store.Append(context.Background(), d.id, ev); err != nil {
			b.log.Warn("confirm: cannot store journal event", "decision", d.id, "event", ev.Type, "err", err)
			b.countStoreError("append")
		}
	}
}
