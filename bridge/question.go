package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/question"
)

// Questions: the agent's elicitation/create of a known session goes to the
// broker as a decision of kind question ([confirm.Broker.AskQuestion]),
// shown to every host that advertised the mode asked
// (clientCapabilities.elicitation.form / .url in its initialize) and to
// Options.Presenters (the decisions API and the page). See
// docs/decisions.md, "Questions", and ACP "Elicitation"
// (https://agentclientprotocol.com/protocol/v1/elicitation).

// elicitModes returns the elicitation modes initialize params advertise: a
// mode counts when clientCapabilities.elicitation.MODE is an object.
func elicitModes(params []byte) (form, url bool) {
	el := acp.MemberBytes(acp.MemberBytes(params, "clientCapabilities"), "elicitation")
	isObj := func(v []byte) bool { return len(v) > 0 && v[0] == '{' }
	return isObj(acp.MemberBytes(el, "form")), isObj(acp.MemberBytes(el, "url"))
}

// noteCapabilities records the elicitation modes host h advertised in its
// initialize params.
func (h *Host) noteCapabilities(params []byte) {
	form, url := elicitModes(params)
	h.elicitForm.Store(form)
	h.elicitURL.Store(url)
}

// canElicit reports whether h advertised elicitation mode m.
func (h *Host) canElicit(m question.Mode) bool {
	switch m {
	case question.ModeForm:
		return h.elicitForm.Load()
	case question.ModeURL:
		return h.elicitURL.Load()
	}
	return false
}

// advertiseElicitation edits the initialize that goes to the agent so that
// clientCapabilities.elicitation holds form and url when the broker and
// its presenters (the decisions API and the page, which serve both) are
// wired: a surgical byte edit, everything else stays as the host sent it.
// Without them the host's own capabilities pass unchanged.
func (b *Bridge) advertiseElicitation(msg []byte, env acp.Envelope) ([]byte, acp.Envelope) {
	if b.broker == nil || len(b.opts.Presenters) == 0 {
		return msg, env
	}
	params := env.Params.Bytes(msg)
	caps := acp.MemberBytes(params, "clientCapabilities")
	if len(caps) == 0 || caps[0] != '{' {
		params = setTop(params, "clientCapabilities", []byte(`{"elicitation":{"form":{},"url":{}}}`))
	} else {
		el := acp.MemberBytes(caps, "elicitation")
		if len(el) == 0 || el[0] != '{' {
			el = []byte(`{}`)
		}
		for _, m := range []string{"url", "form"} {
			if v := acp.MemberBytes(el, m); len(v) == 0 || v[0] != '{' {
				el = setTop(el, m, []byte(`{}`))
			}
		}
		params = setMember(params, "clientCapabilities", "elicitation", el)
	}
	out := splice(msg, env.Params, params)
	oenv, err := acp.Parse(out)
	if err != nil { // not expected: one JSON value replaced by another
		return msg, env
	}
	return out, oenv
}

// setTop returns obj with obj[name] = value (replaced, or inserted first).
func setTop(obj []byte, name string, value []byte) []byte {
	if s := acp.Member(obj, name); s.Present() {
		return splice(obj, s, value)
	}
	return insertFirst(obj, []byte(`"`+name+`":`+string(value)))
}

// askQuestion runs one elicitation/create through the broker and answers
// the agent with what the broker returns.
func (b *Bridge) askQuestion(msg []byte, env acp.Envelope, agentID []byte, occ, sid string) {
	params := append(json.RawMessage(nil), env.Params.Bytes(msg)...)
	req := confirm.Request{SessionID: sid, AgentKey: b.epoch + "/" + occ, Params: params}
	b.permMu.Lock()
	b.asked[occ] = confirm.DecisionID(sid, req.AgentKey)
	b.permMu.Unlock()
	defer func() {
		b.permMu.Lock()
		delete(b.asked, occ)
		b.permMu.Unlock()
	}()
	if k := acp.DuplicateKey(params); k != "" {
		b.replyAgentError(agentID, fmt.Errorf("%w: elicitation/create params have a duplicate member %q", acp.ErrInvalidParams, k))
		return
	}
	hosts, cwd, _ := b.sessionHosts(sid)
	req.Cwd = cwd
	mode := question.Mode(acp.MemberString(params, "mode"))
	presenters := make([]confirm.Presenter, 0, len(hosts)+len(b.opts.Presenters))
	for _, h := range hosts {
		if !h.Driver && h.canElicit(mode) && h.mayAnswer() {
			presenters = append(presenters, questionPresenter{h})
		}
	}
	presenters = append(presenters, b.opts.Presenters...)
	result, err := b.broker.AskQuestion(context.Background(), req, presenters)
	if err != nil {
		b.replyAgentError(agentID, err)
		return
	}
	b.answerAgent(agentID, resultMessage(agentID, result))
}

// errCannotElicit is why a question is not presented to a host that did
// not advertise the elicitation mode asked.
var errCannotElicit = errors.New("the host did not advertise this elicitation mode")

// questionPresenter shows questions to one bridge host as ACP
// elicitation/create requests. It implements [confirm.Presenter].
type questionPresenter struct{ h *Host }

// HostID is the host's id ([confirm.Presenter]).
func (p questionPresenter) HostID() string { return p.h.ID }

// Present sends the agent's elicitation/create params, with any
// _meta.acpmux of the agent's removed and _meta.acpmux.decisionId added,
// under a fresh id of the host's.
func (p questionPresenter) Present(d *confirm.Decision) error {
	params, _ := acp.DeleteMetaMembers(d.Params(), "acpmux")
	meta, _ := json.Marshal(struct {
		DecisionID string `json:"decisionId"`
	}{d.ID()})
	if !p.h.present(d.ID(), acp.MethodElicitationCreate, setMember(params, "_meta", "acpmux", meta)) {
		return errHostGone
	}
	return nil
}

// Withdraw cancels the host's copy ($/cancel_request) and sends the
// resolved notice, as for a permission request.
func (p questionPresenter) Withdraw(d *confirm.Decision, res confirm.Resolution) {
	p.h.withdraw(d.ID(), resolvedNotice(d, res))
}

// Won sends the resolved notice to the host whose answer was delivered.
func (p questionPresenter) Won(d *confirm.Decision, res confirm.Resolution) {
	p.h.withdraw(d.ID(), resolvedNotice(d, res))
}

// agentCompleted hands the agent's elicitation/complete to the broker: an
// open URL-mode question of that elicitationId closes (its copies are
// withdrawn). The notification itself still reaches the hosts.
func (b *Bridge) agentCompleted(params []byte) {
	if b.broker == nil {
		return
	}
	c, err := question.ParseComplete(params)
	if err != nil {
		b.log.Warn("agent sent an invalid elicitation/complete", "err", err)
		return
	}
	b.broker.CompleteElicitation("", c.ElicitationID)
}
