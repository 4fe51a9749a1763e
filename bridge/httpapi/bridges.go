package httpapi

import (
	"net/http"

	"github.com/acpmux/acpmux/confirm"
)

// AmbiguousBody is the body of 409 ambiguous_session: the session id of
// the route is used by several bridges of the shared store, and the
// request did not say which with ?bridge=ID (docs/decisions.md, "Many
// bridges").
type AmbiguousBody struct {
	ErrorBody
	Candidates []confirm.BridgeRef `json:"candidates"`
}

// bridgeOf returns the bridge a session route means: the one ?bridge=
// names, or the only bridge that has session sid, or the only live one of
// several ([confirm.BridgeRef].Live). With several live ones and no
// ?bridge= it writes 409 ambiguous_session with the candidates; with a
// ?bridge= that has no such session, 404. Without a shared store it
// returns "" (this bridge).
func (s *server) bridgeOf(w http.ResponseWriter, r *http.Request, sid string) (string, bool) {
	want := r.URL.Query().Get("bridge")
	if !s.b.Shared() {
		if want != "" && want != s.b.BridgeID() {
			writeError(w, http.StatusNotFound, "not_found", "no such bridge")
			return "", false
		}
		return "", true
	}
	cands, err := s.b.SessionBridges(r.Context(), sid)
	if err != nil {
		s.fail(w, r, err)
		return "", false
	}
	if want != "" {
		for _, c := range cands {
			if c.ID == want {
				return want, true
			}
		}
		writeError(w, http.StatusNotFound, "not_found", "no such session in that bridge")
		return "", false
	}
	switch len(cands) {
	case 0:
		return s.b.BridgeID(), true
	case 1:
		return cands[0].ID, true
	}
	if live := liveOnly(cands); len(live) == 1 {
		return live[0].ID, true // the others stopped or died: their decisions can no longer be answered
	}
	var body AmbiguousBody
	body.Error.Code = "ambiguous_session"
	body.Error.Message = "session " + sid + " is used by several bridges: add ?bridge=ID (one of candidates)"
	body.Candidates = cands
	writeJSON(w, http.StatusConflict, body)
	return "", false
}

// sharedDecision returns the view of decision did of session sid when it
// belongs to bridge bid; otherwise it writes 404 (or the store's error).
func (s *server) sharedDecision(w http.ResponseWriter, r *http.Request, bid, sid, did string) (confirm.View, bool) {
	v, owner, err := s.b.DecisionOf(r.Context(), sid, did)
	if err != nil {
		s.fail(w, r, err)
		return v, false
	}
	if s.b.Shared() && owner != bid {
		writeError(w, http.StatusNotFound, "not_found", "no such decision in that bridge's session")
		return v, false
	}
	return v, true
}

func (s *server) bridgeID() string {
	if s.b == nil {
		return ""
	}
	return s.b.BridgeID()
}

// answerable resolves the bridge of an answer's route and returns the
// decision's view before the answer, or writes the refusal.
func (s *server) answerable(w http.ResponseWriter, r *http.Request) (confirm.View, bool) {
	sid := r.PathValue("sessionId")
	bid, ok := s.bridgeOf(w, r, sid)
	if !ok {
		return confirm.View{}, false
	}
	if !s.b.Shared() {
		return confirm.View{}, true // the broker's Answer judges the ids, as before
	}
	return s.sharedDecision(w, r, bid, sid, r.PathValue("decisionId"))
}

// liveOnly returns the live bridges of cands.
func liveOnly(cands []confirm.BridgeRef) []confirm.BridgeRef {
	var out []confirm.BridgeRef
	for _, c := range cands {
		if c.Live {
			out = append(out, c)
		}
	}
	return out
}
