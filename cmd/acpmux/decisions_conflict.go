package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
)

// checkScope validates --scope for subcommand sub; it returns a usage
// message or "".
func (f *decisionsFlags) checkScope(sub string) string {
	if f.scope == "" {
		return ""
	}
	if sub != "answer" || f.action != "" {
		return "--scope is for answering a permission request (answer --option)"
	}
	switch policy.Scope(strings.ToUpper(f.scope)) {
	case policy.ScopeOnce, policy.ScopeSession, policy.ScopeAlways:
		return ""
	}
	return fmt.Sprintf("--scope %q: want ONCE, SESSION or ALWAYS", f.scope)
}

// conflictSentence says in one sentence why the API refused an answer
// with 409: the decision changed under the person (stale), someone else
// answered first, it timed out, or it was cancelled.
func conflictSentence(e *apiError) string {
	v := e.decision
	if e.code == "ambiguous_session" {
		return ambiguousSentence(e.candidates)
	}
	if e.code == "stale" {
		return "not answered: the request changed after it was shown (mode, working directory, arguments or policy), so acpmux refused it rather than approve what you did not see; the agent got its reject option"
	}
	if v == nil {
		return fmt.Sprintf("not answered: the decision is already closed (%s)", e.msg)
	}
	when := ""
	if v.ClosedAt != nil {
		when = " at " + v.ClosedAt.Local().Format(time.TimeOnly)
	}
	switch v.Status {
	case store.StatusAnswered:
		return fmt.Sprintf("not answered: %s already answered decision %s%s with %s; your answer was not used",
			orSomeone(answerer(answeredPerson(v.AnsweredBy, v.Events), v.ResolvedBy)), v.ID, when, describeAnswer(v.Answer))
	case store.StatusTimedOut:
		return fmt.Sprintf("not answered: decision %s timed out%s before your answer arrived; the agent got its reject option", v.ID, when)
	case store.StatusCancelled:
		return fmt.Sprintf("not answered: decision %s was cancelled%s (%s) before your answer arrived", v.ID, when, reasonText(v.Reason))
	}
	return fmt.Sprintf("not answered: decision %s is %s (%s)", v.ID, v.Status, e.msg)
}

func orSomeone(by string) string {
	if by == "" {
		return "acpmux"
	}
	return safe(by)
}

// reasonText says what a cancellation reason means.
func reasonText(r store.Reason) string {
	switch r {
	case store.ReasonSessionCancelled:
		return "the prompt turn was cancelled"
	case store.ReasonAgentCancelled:
		return "the agent withdrew its request"
	case store.ReasonAgentExited:
		return "the agent exited"
	case store.ReasonBridgeRestart, store.ReasonBridgeShutdown:
		return "its acpmux stopped"
	case store.ReasonNoEligibleHost:
		return "no host could answer it"
	case store.ReasonStale:
		return "the request changed after it was shown"
	case store.ReasonStoreError:
		return "the store could not record it"
	}
	return string(r)
}

// findSession returns the session of decision id, and its bridge in a
// shared store ("" otherwise), asking every session the API lists. A
// decision found in more than one session (ids are unique in a store, so
// only a hand-made id could be) is an error naming them: pass --session
// (and --bridge).
func (c *apiClient) findSession(id string) (string, string, error) {
	var ss struct{ Sessions []confirm.SessionView }
	if err := c.do("GET", "/v1/sessions", nil, &ss, nil); err != nil {
		return "", "", err
	}
	var found []decisionsFlags
	for _, s := range ss.Sessions {
		var v confirm.View
		at := decisionsFlags{session: s.SessionID}
		if s.Bridge != nil {
			at.bridge = s.Bridge.ID
		}
		err := c.do("GET", decisionPath(at, id), nil, &v, nil)
		if err == nil {
			found = append(found, at)
			continue
		}
		if ae, ok := err.(*apiError); !ok || ae.status != http.StatusNotFound {
			return "", "", fmt.Errorf("session %s: %w", s.SessionID, err)
		}
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("no decision %s in any of the %d sessions of %s", url.PathEscape(id), len(ss.Sessions), c.base.Host)
	case 1:
		return found[0].session, found[0].bridge, nil
	}
	var where []string
	for _, at := range found {
		where = append(where, fmt.Sprintf("--session %s --bridge %s", at.session, at.bridge))
	}
	return "", "", fmt.Errorf("decision %s is in %d sessions: pass one of %s", url.PathEscape(id), len(found), strings.Join(where, "; "))
}

// ambiguousCandidates returns the candidates of a 409 ambiguous_session
// body (httpapi.AmbiguousBody), none for any other code.
func ambiguousCandidates(code string, body []byte) []confirm.BridgeRef {
	if code != "ambiguous_session" {
		return nil
	}
	var b httpapi.AmbiguousBody
	json.Unmarshal(body, &b)
	return b.Candidates
}

// ambiguousSentence says that the --session id is used by several bridges
// of the shared store and lists them, for the --bridge to pass.
func ambiguousSentence(cands []confirm.BridgeRef) string {
	var sb strings.Builder
	sb.WriteString("the --session id is used by several bridges sharing the store: pass --bridge ID with one of:")
	for _, c := range cands {
		fmt.Fprintf(&sb, "\n  %s", bridgeLabel(&c))
	}
	return sb.String()
}

// bridgeLabel is "ID (name NAME, host HOST)" of a bridge, without the
// parts it does not have.
func bridgeLabel(b *confirm.BridgeRef) string {
	if b == nil {
		return "-"
	}
	var parts []string
	if b.Name != "" {
		parts = append(parts, "name "+safe(b.Name))
	}
	if b.Host != "" {
		parts = append(parts, "host "+safe(b.Host))
	}
	if len(parts) == 0 {
		return safe(b.ID)
	}
	return safe(b.ID) + " (" + strings.Join(parts, ", ") + ")"
}
