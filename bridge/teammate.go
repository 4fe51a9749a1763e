package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/bridge/upstream"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

// The lead's side of docs/teammates.md: a host that said
// _acpmux/teammate/hello is a teammate bridge. Its decisions are opened in
// this bridge's broker under the session "teammate:NAME/SESSION" and
// presented to this bridge's hosts (never to a teammate) and presenters;
// the chosen optionId goes back as the ask's result. A teammate host is
// never shown any decision.

const teammatePrefix = "_acpmux/teammate/"

// teammateRequest serves a host request in the teammate namespace.
func (b *Bridge) teammateRequest(h *Host, id []byte, method string, params []byte) {
	switch method {
	case upstream.MethodHello:
		b.teammateHello(h, id, params)
	case upstream.MethodAsk:
		b.teammateAsk(h, id, params)
	default:
		b.replyError(h, id, fmt.Errorf("%w: %s", acp.ErrMethodNotFound, method))
	}
}

// teammateHello binds teammate name to host h while h is connected.
func (b *Bridge) teammateHello(h *Host, id []byte, params []byte) {
	m, err := acp.DecodeObject(params, []string{"teammate"}, true)
	var name string
	if err == nil {
		name, err = acp.DecodeString(m["teammate"], "teammate")
	}
	if err == nil {
		err = upstream.CheckName(name)
	}
	if err != nil {
		b.replyError(h, id, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err))
		return
	}
	b.mu.Lock()
	holder := b.teammates[name]
	switch {
	case holder != nil && holder != h:
		err = fmt.Errorf("%w: teammate name %q is taken by another connection", acp.ErrInvalidRequest, name)
	case h.teammate != "" && h.teammate != name:
		err = fmt.Errorf("%w: this connection is teammate %q", acp.ErrInvalidRequest, h.teammate)
	case b.broker == nil:
		err = fmt.Errorf("%w: this acpmux decides no permission requests", acp.ErrMethodNotFound)
	default:
		if b.teammates == nil {
			b.teammates = map[string]*Host{}
		}
		b.teammates[name] = h
		h.teammate = name
	}
	b.mu.Unlock()
	if err != nil {
		b.log.Warn("teammate hello refused", "host", h.ID, "teammate", name, "err", err)
		b.replyError(h, id, err)
		return
	}
	b.log.Info("teammate connected", "host", h.ID, "teammate", name)
	h.send(resultMessage(id, []byte(`{}`)))
}

// teammateOf returns the teammate name of host h, or "".
func (b *Bridge) teammateOf(h *Host) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return h.teammate
}

// teammateAsk opens the lead's decision for a teammate's and answers the
// teammate when it closes, on a goroutine of its own.
func (b *Bridge) teammateAsk(h *Host, id []byte, params []byte) {
	name := b.teammateOf(h)
	a, err := upstream.DecodeAsk(params)
	switch {
	case err != nil:
	case name == "":
		err = fmt.Errorf("%w: say %s first", acp.ErrInvalidRequest, upstream.MethodHello)
	case a.Teammate != name:
		err = fmt.Errorf("%w: this connection is teammate %q, not %q", acp.ErrInvalidRequest, name, a.Teammate)
	}
	if err != nil {
		b.replyError(h, id, err)
		return
	}
	req, err := teammateRequest(a, b.epoch)
	if err != nil {
		b.replyError(h, id, err)
		return
	}
	b.permWG.Add(1)
	go func() {
		defer b.permWG.Done()
		h.send(b.decideTeammate(req, a, id))
	}()
}

// teammateRequest builds the lead's confirm.Request of ask a: a
// session/request_permission of session "teammate:NAME/SESSION" with the
// teammate's tool call and exact options, and the teammate's displayed
// fields relayed verbatim. Its agent key is [teammateKey].
func teammateRequest(a upstream.Ask, epoch string) (confirm.Request, error) {
	sid := upstream.SessionName(a.Teammate, a.SessionID)
	type rawInput struct {
		Command string `json:"command"`
	}
	tc := struct {
		ToolCallID string    `json:"toolCallId"`
		Title      string    `json:"title"`
		Kind       string    `json:"kind,omitempty"`
		RawInput   *rawInput `json:"rawInput,omitempty"`
	}{ToolCallID: a.ToolCallID, Title: a.Title, Kind: a.Kind}
	if a.Command != "" {
		tc.RawInput = &rawInput{a.Command}
	}
	params, err := json.Marshal(struct {
		SessionID string                 `json:"sessionId"`
		ToolCall  any                    `json:"toolCall"`
		Options   []acp.PermissionOption `json:"options"`
	}{sid, tc, a.Options})
	if err != nil {
		return confirm.Request{}, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	timeout := min(max(time.Duration(a.TimeoutMs)*time.Millisecond, time.Second), confirm.MaxTimeout)
	return confirm.Request{SessionID: sid, AgentKey: teammateKey(epoch, a.Teammate, a.DecisionID), Params: params,
		Cwd: a.Cwd, Timeout: timeout, Producer: "teammate:" + a.Teammate,
		Relayed: &confirm.Relayed{Title: a.Title, Command: a.Command, Classification: a.Classification,
			Warnings: a.Warnings, DisplayedTextSHA256: a.DisplayedTextSHA256}}, nil
}

// decideTeammate asks the broker about req, presenting it to every host
// that is not a teammate and not a driver, plus the presenters, and
// returns the response to the teammate's ask id: the optionId a host
// chose, "cancelled" when the decision closed otherwise, or an error.
func (b *Bridge) decideTeammate(req confirm.Request, a upstream.Ask, id []byte) []byte {
	b.mu.Lock()
	presenters := make([]confirm.Presenter, 0, len(b.hosts)+len(b.opts.Presenters))
	for _, x := range b.hosts {
		if !x.Driver && x.teammate == "" && x.mayAnswer() {
			presenters = append(presenters, hostPresenter{x})
		}
	}
	b.mu.Unlock()
	presenters = append(presenters, b.opts.Presenters...)
	b.broker.TrackSession(req.SessionID, req.Cwd)
	b.mu.Lock()
	b.teammateSessionLocked(req.SessionID, a.Teammate) // listed, so hosts can attach (teammate_watch.go)
	b.mu.Unlock()
	b.log.Info("teammate asks", "teammate", a.Teammate, "session", req.SessionID, "title", a.Title)
	if _, err := b.broker.Ask(context.Background(), req, presenters); err != nil {
		return errorMessage(id, err)
	}
	did := confirm.DecisionID(req.SessionID, req.AgentKey)
	out := upstream.AskResult{Outcome: upstream.Outcome{Outcome: acp.OutcomeCancelled}, DisplayedTextSHA256: a.DisplayedTextSHA256}
	if v, err := b.broker.Decision(context.Background(), req.SessionID, did); err == nil &&
		v.Status == store.StatusAnswered && v.Answer != nil && v.Answer.OptionID != "" && v.Answer.Text == "" {
		out.Outcome = upstream.Outcome{Outcome: acp.OutcomeSelected, OptionID: v.Answer.OptionID}
		out.DisplayedTextSHA256 = v.DisplayedTextSHA256
	}
	res, _ := json.Marshal(out)
	return resultMessage(id, res)
}

// teammateWithdraw closes the lead's decision of a teammate decision that
// closed without the lead's answer; only the teammate that asked can.
func (b *Bridge) teammateWithdraw(h *Host, params []byte) {
	name := b.teammateOf(h)
	var w upstream.Withdraw
	_, err := acp.DecodeObject(params, []string{"teammate", "sessionId", "decisionId"}, true)
	if err == nil {
		err = json.Unmarshal(params, &w)
	}
	if err != nil || name == "" || w.Teammate != name {
		b.log.Warn("teammate withdraw refused: not this connection's teammate", "host", h.ID, "teammate", name, "named", w.Teammate, "err", err)
		return
	}
	sid := upstream.SessionName(name, w.SessionID)
	b.broker.CancelRequest(confirm.DecisionID(sid, teammateKey(b.epoch, name, w.DecisionID)))
}

// teammateKey is the lead's agent key of teammate name's decision did:
// the same ask re-offered to this lead (after a reconnect) joins the same
// decision, and one re-offered to a restarted lead, whose durable store
// holds the old decision closed (bridge_restart), opens a new one.
func teammateKey(epoch, name, did string) string { return "teammate/" + epoch + "/" + name + "/" + did }

// teammateLeft releases h's teammate name. b.mu is held.
func (b *Bridge) teammateLeftLocked(h *Host) {
	if h.teammate != "" && b.teammates[h.teammate] == h {
		delete(b.teammates, h.teammate)
	}
}

// isTeammateMethod reports whether method is in the teammate namespace.
func isTeammateMethod(method string) bool { return strings.HasPrefix(method, teammatePrefix) }

// teammateOfSession returns the teammate name of a session named by
// upstream.SessionName, and whether sid is one.
func teammateOfSession(sid string) (string, bool) {
	rest, ok := strings.CutPrefix(sid, "teammate:")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "/")
	return name, ok
}
