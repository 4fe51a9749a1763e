package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/policy"
)

// planItems serves GET /v1/sessions/{sessionId}/plan-items[?limit=N]:
// 200 {"planItems": [gate.PlanItem…]}, oldest first, at most N (default
// and maximum 1000); 400 invalid_limit; 404 when the session is unknown and
// has no rows (docs/policy.md, "Audit").
func (s *server) planItems(w http.ResponseWriter, r *http.Request) {
	if !s.available(w) {
		return
	}
	sid := r.PathValue("sessionId")
	limit := 1000
	if q := r.URL.Query().Get("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n <= 0 || n > 1000 {
			writeError(w, http.StatusBadRequest, "invalid_limit", "limit must be 1..1000")
			return
		}
		limit = n
	}
	items, err := s.b.PlanItems(r.Context(), sid, limit)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(items) == 0 && !s.b.HasSession(sid) {
		writeError(w, http.StatusNotFound, "not_found", "no such session")
		return
	}
	if items == nil {
		items = []gate.PlanItem{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"planItems": items})
}

// scopeError maps the scope errors of an answer to their code, "" for
// other errors: 400 always_unavailable (ALWAYS without a durable store) and
// 400 scope_refused (a persistent scope for a plan-mode one-off, or an
// unknown scope).
func scopeError(err error) string {
	switch {
	case errors.Is(err, policy.ErrAlwaysUnavailable):
		return "always_unavailable"
	case errors.Is(err, policy.ErrScopeRefused):
		return "scope_refused"
	}
	return ""
}
