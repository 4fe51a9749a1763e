package bridge

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/question"
)

// hostPresenter shows decisions to one bridge host as ACP
// session/request_permission requests. It implements [confirm.Presenter].
type hostPresenter struct{ h *Host }

// HostID is the host's id ([confirm.Presenter]).
func (p hostPresenter) HostID() string { return p.h.ID }

// Present sends the agent's request with the decision's warnings added
// (presentParams) under a fresh id of the host's. A question (a host that
// attached while it was open) goes as elicitation/create to a host that
// advertised its mode; any other host cannot answer it (errCannotElicit).
func (p hostPresenter) Present(d *confirm.Decision) error {
	if d.Snapshot().Kind == question.Kind {
		if q := d.Question(); q == nil || !p.h.canElicit(q.Params.Mode) {
			return errCannotElicit
		}
		return questionPresenter(p).Present(d)
	}
	if !p.h.present(d.ID(), acp.MethodRequestPermission, presentParams(d)) {
		return errHostGone
	}
	return nil
}

// Withdraw cancels the host's copy and sends the resolved notice.
func (p hostPresenter) Withdraw(d *confirm.Decision, res confirm.Resolution) {
	p.h.withdraw(d.ID(), resolvedNotice(d, res))
}

// Won sends the resolved notice to the host whose answer was delivered
// (its copy is answered, so there is nothing to cancel).
func (p hostPresenter) Won(d *confirm.Decision, res confirm.Resolution) {
	p.h.withdraw(d.ID(), resolvedNotice(d, res))
}

// MethodPermissionResolved is the acpmux extension notification (ACP
// "Extensibility": methods starting with "_") that the bridge sends to a host
// together with $/cancel_request when the host's copy of a decision is
// withdrawn, and to the host whose answer won. Its params are
// [confirm.Notice]'s. Hosts that do not know it ignore it, as ACP requires
// for unknown extension notifications.
const MethodPermissionResolved = "_acpmux/permission_resolved"

// resolvedNotice is the _acpmux/permission_resolved notification of d
// closed as res ([confirm.Notice]).
func resolvedNotice(d *confirm.Decision, res confirm.Resolution) []byte {
	return notification(MethodPermissionResolved, string(confirm.Notice(d, res)))
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
	// Whatever _meta.acpmux the agent put anywhere in its request
	// (toolCall._meta, a content block's _meta) is not acpmux's: hosts
	// trust what they find under that name.
	params, _ := acp.DeleteMetaMembers(d.Params(), "acpmux")
	s := d.Snapshot()
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	var mode gate.Mode
	var route gate.Route
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
		Mode                gate.Mode               `json:"mode,omitempty"`
		Route               gate.Route              `json:"route,omitempty"`
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

// prependToolCallContent puts blocks before params.toolCall.content,
// leaving out a block the content already holds (compared as JSON
// values): behind a nested acpmux, the inner bridge's warnings are already
// there, and a host must not read each warning twice.
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
	blocks = slices.DeleteFunc(blocks, func(b json.RawMessage) bool {
		return slices.ContainsFunc(content, func(c json.RawMessage) bool { return jsonEqual(b, c) })
	})
	if len(blocks) == 0 {
		return params
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

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
