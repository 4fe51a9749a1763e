package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
)

// BrokerRouter routes the agent's permission requests through a
// confirm.Broker: each one becomes a decision presented to every host of the
// session (the owner first) and to the extra presenters (the HTTP API),
// and the first valid answer wins (docs/decisions.md). It implements
// PermissionRouter.
type BrokerRouter struct {
	br    *confirm.Broker
	extra []confirm.Presenter
	epoch string // distinguishes this acpmux process's agent request ids
	log   *slog.Logger

	mu      sync.Mutex                  // guards pending, shown
	pending map[string]string           // agent request key → session id, while asked
	shown   map[string]map[string]*Host // decision id → hosts it was presented to
}

// NewBrokerRouter returns a router over br. extra presenters (such as
// httpapi.Presenter) are shown every decision besides the session's hosts.
func NewBrokerRouter(br *confirm.Broker, log *slog.Logger, extra ...confirm.Presenter) *BrokerRouter {
	var e [8]byte
	rand.Read(e[:])
	if log == nil {
		log = slog.Default()
	}
	return &BrokerRouter{br: br, extra: extra, epoch: hex.EncodeToString(e[:]), log: log, pending: map[string]string{}, shown: map[string]map[string]*Host{}}
}

// Broker returns the broker the router uses.
func (r *BrokerRouter) Broker() *confirm.Broker { return r.br }

func (r *BrokerRouter) agentKey(key string) string { return r.epoch + "/" + key }

// Ask implements PermissionRouter.
func (r *BrokerRouter) Ask(ctx context.Context, req PermissionRequest) (json.RawMessage, error) {
	r.mu.Lock()
	r.pending[req.AgentKey] = req.SessionID
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, req.AgentKey)
		r.mu.Unlock()
	}()
	if k := acp.DuplicateKey(req.Params); k != "" {
		// acpmux, the hosts and the page would not all read the same
		// request (JSON parsers keep different copies of a duplicate).
		return nil, fmt.Errorf("%w: session/request_permission params have a duplicate member %q", acp.ErrInvalidParams, k)
	}
	if req.UnknownSession {
		return r.br.RefuseUnknownSession(confirm.Request{SessionID: req.SessionID, AgentKey: r.agentKey(req.AgentKey), Params: req.Params})
	}
	presenters := make([]confirm.Presenter, 0, len(req.Hosts)+len(r.extra))
	for _, h := range req.Hosts {
		presenters = append(presenters, hostPresenter{h, r})
	}
	presenters = append(presenters, r.extra...)
	producer := ""
	if len(req.Hosts) > 0 {
		producer = req.Hosts[0].ID
	}
	result, err := r.br.Ask(ctx, confirm.Request{
		Producer:  producer,
		SessionID: req.SessionID,
		AgentKey:  r.agentKey(req.AgentKey),
		Params:    req.Params,
		Cwd:       req.Cwd,
	}, presenters)
	did := confirm.DecisionID(req.SessionID, r.agentKey(req.AgentKey))
	r.tellWinner(req.SessionID, did)
	r.mu.Lock()
	delete(r.shown, did)
	r.mu.Unlock()
	return result, err
}

// HostAnswered implements PermissionRouter: a result is checked strictly
// by the broker; an error response counts as the host abstaining.
func (r *BrokerRouter) HostAnswered(h *Host, decision string, result, errObj []byte) {
	if result == nil {
		r.br.Abstain(decision, h.ID, "error response: "+string(errObj))
		return
	}
	if err := r.br.AnswerResult(decision, h.ID, result); err != nil {
		r.log.Warn("host answer not accepted", "host", h.ID, "decision", decision, "err", err)
	}
}

// tellWinner sends the resolved notice to the host whose answer closed the
// decision (the broker withdraws only the other copies), so that it learns
// its answer was the one delivered. It runs once Ask has returned.
func (r *BrokerRouter) tellWinner(sid, decision string) {
	v, err := r.br.Decision(context.Background(), sid, decision)
	if err != nil || !v.Status.Closed() {
		return
	}
	r.mu.Lock()
	h := r.shown[decision][v.ResolvedBy]
	r.mu.Unlock()
	if h != nil {
		opt := ""
		if v.Answer != nil {
			opt = v.Answer.OptionID
		}
		notice, _ := json.Marshal(confirm.ResolvedNotice{SessionID: sid, DecisionID: decision, ToolCallID: v.ToolCall.ToolCallID,
			Status: v.Status, OptionID: opt, ResolvedBy: v.ResolvedBy, Reason: v.Reason, At: closedAt(v)})
		h.withdraw(decision, notice)
	}
}

func closedAt(v confirm.View) time.Time {
	if v.ClosedAt != nil {
		return *v.ClosedAt
	}
	return time.Now().UTC()
}

// HostLeft implements PermissionRouter.
func (r *BrokerRouter) HostLeft(h *Host, decision string) {
	r.br.Abstain(decision, h.ID, "host disconnected")
}

// HostAbstained implements PermissionRouter.
func (r *BrokerRouter) HostAbstained(h *Host, decision, reason string) {
	r.br.Abstain(decision, h.ID, reason)
}

// CancelSession implements PermissionRouter.
func (r *BrokerRouter) CancelSession(sid, reason string) { r.br.CancelSession(sid, reason) }

// CancelRequest implements PermissionRouter.
func (r *BrokerRouter) CancelRequest(agentKey string) bool {
	r.mu.Lock()
	sid, ok := r.pending[agentKey]
	r.mu.Unlock()
	return ok && r.br.CancelRequest(sid, r.agentKey(agentKey))
}

// ToolCallUpdate implements PermissionRouter.
func (r *BrokerRouter) ToolCallUpdate(sid string, update []byte) { r.br.ToolCallUpdate(sid, update) }

// SessionStarted implements PermissionRouter.
func (r *BrokerRouter) SessionStarted(sid, cwd string) { r.br.TrackSession(sid, cwd) }

// HostAttached implements PermissionRouter.
func (r *BrokerRouter) HostAttached(sid string, h *Host) { r.br.AddPresenter(sid, hostPresenter{h, r}) }

// Stopping implements PermissionRouter: every open decision of every
// session is cancelled (the agent gets "cancelled"), so that no answer is
// journalled as delivered to an agent that is being shut down.
func (r *BrokerRouter) Stopping(reason string) {
	for _, s := range r.br.Sessions() {
		r.br.CancelSession(s.SessionID, reason)
	}
}

// AgentExited implements PermissionRouter.
func (r *BrokerRouter) AgentExited() { r.br.AgentExited() }

// hostPresenter shows decisions to one bridge host as ACP
// session/request_permission requests.
type hostPresenter struct {
	h *Host
	r *BrokerRouter
}

func (p hostPresenter) HostID() string { return p.h.ID }

// Present sends the agent's request with the decision's warnings added
// (presentParams) under a fresh id of the host's.
func (p hostPresenter) Present(d *confirm.Decision) error {
	p.r.mu.Lock()
	if p.r.shown[d.ID()] == nil {
		p.r.shown[d.ID()] = map[string]*Host{}
	}
	p.r.shown[d.ID()][p.h.ID] = p.h
	p.r.mu.Unlock()
	if !p.h.present(d.ID(), presentParams(d)) {
		return errHostGone
	}
	return nil
}

// Withdraw cancels the host's copy and sends the resolved notice.
func (p hostPresenter) Withdraw(d *confirm.Decision, res confirm.Resolution) {
	p.h.withdraw(d.ID(), confirm.Notice(d, res))
}

var errHostGone = &acp.Error{Code: acp.ErrNoHost.Code, Message: "host disconnected"}

// presentParams returns the params a host is shown for decision d: the
// agent's params byte-for-byte, plus "_meta.acpmux" {decisionId, warnings,
// classification, command, displayedTextSha256, oneOff?, mode?, route?}
// and, when there are warnings, one text content block per warning before
// the tool call's own content (before any diff). For an exact one-off
// prompt (plan mode) "options" is replaced by the offered subset, so
// persistent options are never shown. See docs/protocol.md and
// docs/plan-mode.md.
func presentParams(d *confirm.Decision) []byte {
	params := d.Params()
	s := d.Snapshot()
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	var mode confirm.Mode
	var route string
	if s.Gate != nil {
		mode, route = s.Gate.Mode, s.Gate.Route
	}
	meta, _ := json.Marshal(struct {
		DecisionID          string                  `json:"decisionId"`
		Warnings            []string                `json:"warnings"`
		Command             string                  `json:"command,omitempty"`
		Classification      *confirm.Classification `json:"classification,omitempty"`
		DisplayedTextSHA256 string                  `json:"displayedTextSha256"`
		OneOff              bool                    `json:"oneOff,omitempty"`
		Mode                confirm.Mode            `json:"mode,omitempty"`
		Route               string                  `json:"route,omitempty"`
	}{d.ID(), s.Warnings, s.Command, s.Classification, s.DisplayedTextSHA256, d.OneOff(), mode, route})
	out := setMember(params, "_meta", "acpmux", meta)
	if d.OneOff() {
		out = replaceOptions(out, d.Options())
	}
	if len(s.Warnings) == 0 {
		return out
	}
	blocks := make([]json.RawMessage, 0, len(s.Warnings))
	for _, w := range s.Warnings {
		b, _ := json.Marshal(map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "⚠ " + w}})
		blocks = append(blocks, b)
	}
	return prependToolCallContent(out, blocks)
}

// setMember returns obj with obj[outer][name] = value, splicing bytes so
// that everything else stays as it was. An existing obj[outer][name] is
// replaced; a missing obj[outer] is created.
func setMember(obj []byte, outer, name string, value []byte) []byte {
	os := acp.Member(obj, outer)
	if !os.Present() || obj[os.Start] != '{' {
		if os.Present() { // not an object: replace it
			return splice(obj, os, []byte(`{"`+name+`":`+string(value)+`}`))
		}
		return insertFirst(obj, []byte(`"`+outer+`":{"`+name+`":`+string(value)+`}`))
	}
	inner := os.Bytes(obj)
	is := acp.Member(inner, name)
	if is.Present() {
		return splice(obj, acp.Span{Start: os.Start + is.Start, End: os.Start + is.End}, value)
	}
	return splice(obj, os, insertFirst(inner, []byte(`"`+name+`":`+string(value))))
}

// prependToolCallContent puts blocks before params.toolCall.content.
func prependToolCallContent(params []byte, blocks []json.RawMessage) []byte {
	ts := acp.Member(params, "toolCall")
	if !ts.Present() || params[ts.Start] != '{' {
		return params
	}
	tc := ts.Bytes(params)
	cs := acp.Member(tc, "content")
	var content []json.RawMessage
	if cs.Present() {
		if json.Unmarshal(cs.Bytes(tc), &content) != nil {
			return params
		}
	}
	all, _ := json.Marshal(append(blocks, content...))
	var newTC []byte
	if cs.Present() {
		newTC = splice(tc, cs, all)
	} else {
		newTC = insertFirst(tc, []byte(`"content":`+string(all)))
	}
	return splice(params, ts, newTC)
}

// splice replaces span s of b with v in a new slice.
func splice(b []byte, s acp.Span, v []byte) []byte { return acp.WithID(b, s, v) }

// insertFirst inserts member (`"k":v`) as the first member of object obj.
func insertFirst(obj, member []byte) []byte {
	i := 0
	for i < len(obj) && obj[i] != '{' {
		i++
	}
	rest := obj[i+1:]
	sep := ","
	j := 0
	for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t' || rest[j] == '\r' || rest[j] == '\n') {
		j++
	}
	if j < len(rest) && rest[j] == '}' {
		sep = ""
	}
	out := make([]byte, 0, len(obj)+len(member)+1)
	out = append(out, obj[:i+1]...)
	out = append(out, member...)
	out = append(out, sep...)
	return append(out, rest...)
}

// replaceOptions returns params with its "options" member replaced by opts
// (the offered subset of an exact one-off prompt).
func replaceOptions(params []byte, opts []acp.PermissionOption) []byte {
	os := acp.Member(params, "options")
	if !os.Present() {
		return params
	}
	b, err := json.Marshal(opts)
	if err != nil {
		return params
	}
	return splice(params, os, b)
}
