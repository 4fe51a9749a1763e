package httpapi

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
)

// Options configure the API handler.
type Options struct {
	// Addr is the address the server really listens on, host:port (after
	// resolving port 0). The Host header must be this address, or
	// localhost, 127.0.0.1 or [::1] with its port. Required.
	Addr string
	// AllowedHosts are further accepted Host header values (host:port), for
	// a server started with --allow-remote and reached by name.
	AllowedHosts []string
	// Token is the --token-file bearer token: an admin named LegacyPerson.
	// Empty means none (only People's tokens are accepted; with neither,
	// every request is refused with 401).
	Token string
	// People, when not nil, holds the per-person tokens (docs/tokens.md),
	// looked up on every request, so an added or revoked token counts at
	// once.
	People store.People
	// MaxBodyBytes caps the body of POST
	// /v1/sessions/{sessionId}/decisions/{decisionId}; 0 means
	// DefaultMaxBodyBytes. Every other route, Routes included, takes no
	// body (413).
	MaxBodyBytes int64
	// HostID names the API in decision journals and is the HostID of its
	// Presenter; "" means DefaultHostID.
	HostID string
	// Version is reported by GET /v1/capabilities.
	Version string
	// Logger receives one line per refused or failed request. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Routes are more handlers served behind the same guard, by ServeMux
	// pattern: the /acp WebSocket and the web page.
	Routes map[string]http.Handler
}

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 64 << 10
	DefaultHostID       = "http"
)

// route is one entry of the route table: a Go 1.22 ServeMux pattern, its
// handler, and whether it takes a body of up to Options.MaxBodyBytes
// (otherwise none). Every route is reached only through the guard.
type route struct {
	pattern string
	handle  func(s *server, w http.ResponseWriter, r *http.Request)
	body    bool
}

// routes is the complete route table of the API.
var routes = []route{
	{"GET /v1/capabilities", (*server).capabilities, false},
	{"GET /v1/sessions", (*server).sessions, false},
	{"GET /v1/sessions/{sessionId}/decisions", (*server).listDecisions, false},
	{"GET /v1/sessions/{sessionId}/decisions/{decisionId}", (*server).getDecision, false},
	{"POST /v1/sessions/{sessionId}/decisions/{decisionId}", (*server).answer, true},
	{"GET /v1/sessions/{sessionId}/plan-items", (*server).planItems, false}, // planitems.go
}

type server struct {
	b    *confirm.Broker
	opts Options
	log  *slog.Logger
}

// New returns the decisions API for broker b as one http.Handler, every
// request passing the guard described in the package doc before routing.
// With a nil b, GET /v1/capabilities reports "decisions": false and every
// other route answers 503. Safe for concurrent use.
func New(b *confirm.Broker, opts Options) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.HostID == "" {
		opts.HostID = DefaultHostID
	}
	s := &server{b: b, opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	mux := http.NewServeMux()
	for _, rt := range routes {
		var max int64
		if rt.body {
			max = opts.MaxBodyBytes
		}
		mux.Handle(rt.pattern, limitBody(max, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })))
	}
	for pattern, h := range opts.Routes {
		mux.Handle(pattern, limitBody(0, h))
	}
	if _, ok := opts.Routes["/"]; !ok {
		mux.Handle("/", limitBody(0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "not_found", "no such route")
		})))
	}
	return &guard{next: mux, hosts: allowedHosts(opts.Addr, opts.AllowedHosts),
		tokenSum: sha256.Sum256([]byte(opts.Token)), noToken: opts.Token == "", people: opts.People}
}

// Capabilities is the body of GET /v1/capabilities.
type Capabilities struct {
	Decisions    bool   `json:"decisions"`    // false when no broker is wired: hide the decisions UI
	Version      string `json:"version"`      // acpmux version
	MaxBodyBytes int64  `json:"maxBodyBytes"` // cap of a POST body
	HostID       string `json:"hostId"`       // how API answers are named in journals
	// BridgeID is this bridge's id in a shared store ("" otherwise, and
	// for acpmux inbox): the page shows the other bridges' sessions
	// through this API.
	BridgeID string `json:"bridgeId,omitempty"`
	// Person is who the request's token authenticates (docs/tokens.md).
	Person *identity.Person `json:"person,omitempty"`
}

func (s *server) capabilities(w http.ResponseWriter, r *http.Request) {
	caps := Capabilities{Decisions: s.b != nil, Version: s.opts.Version,
		MaxBodyBytes: s.opts.MaxBodyBytes, HostID: s.opts.HostID, BridgeID: s.bridgeID()}
	if p, ok := identity.PersonFrom(r.Context()); ok {
		caps.Person = &p
	}
	writeJSON(w, http.StatusOK, caps)
}

// available writes 503 when no broker is wired.
func (s *server) available(w http.ResponseWriter) bool {
	if s.b == nil {
		writeError(w, http.StatusServiceUnavailable, "decisions_unavailable", "no confirmation broker is wired to this server")
		return false
	}
	return true
}

func (s *server) sessions(w http.ResponseWriter, r *http.Request) {
	if !s.available(w) {
		return
	}
	all, err := s.b.AllSessions(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": all})
}

func (s *server) listDecisions(w http.ResponseWriter, r *http.Request) {
	if !s.available(w) {
		return
	}
	sid := r.PathValue("sessionId")
	status := store.Status(r.URL.Query().Get("status"))
	switch status {
	case "", store.StatusOpen, store.StatusAnswered, store.StatusTimedOut, store.StatusCancelled:
	default:
		writeError(w, http.StatusBadRequest, "invalid_status", "status must be open, answered, timed_out or cancelled")
		return
	}
	bid, ok := s.bridgeOf(w, r, sid)
	if !ok {
		return
	}
	all, err := s.b.DecisionsOf(r.Context(), bid, sid)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(all) == 0 && !s.b.HasSession(sid) {
		writeError(w, http.StatusNotFound, "not_found", "no such session")
		return
	}
	out := make([]confirm.View, 0, len(all))
	for _, v := range all {
		if status == "" || v.Status == status {
			out = append(out, v)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"decisions": out})
}

func (s *server) getDecision(w http.ResponseWriter, r *http.Request) {
	if !s.available(w) {
		return
	}
	sid := r.PathValue("sessionId")
	bid, ok := s.bridgeOf(w, r, sid)
	if !ok {
		return
	}
	v, ok := s.sharedDecision(w, r, bid, sid, r.PathValue("decisionId"))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// AnswerResponse is the body of a successful POST: the decision after the
// answer, and whether the answer repeated the one already recorded.
type AnswerResponse struct {
	confirm.View
	Deduped bool `json:"deduped"`
}

// MarshalJSON encodes the view (a permission decision or a question, as
// confirm.View encodes it) with the member "deduped" added.
func (r AnswerResponse) MarshalJSON() ([]byte, error) {
	v, err := json.Marshal(r.View)
	if err != nil {
		return nil, err
	}
	d, _ := json.Marshal(r.Deduped)
	return append(append(v[:len(v)-1:len(v)-1], `,"deduped":`...), append(d, '}')...), nil
}

func (s *server) answer(w http.ResponseWriter, r *http.Request) {
	if !s.available(w) {
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "the body is larger than the limit")
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_body", err.Error())
		return
	}
	// acp.Member reads valid JSON only; a body that is not goes to
	// decodeAnswer, which refuses it as invalid_body.
	if json.Valid(data) && acp.Member(data, "action").Present() {
		s.answerQuestion(w, r, data)
		return
	}
	a, err := decodeAnswer(data)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_body", err.Error())
		return
	}
	before, ok := s.answerable(w, r)
	if !ok {
		return
	}
	v, deduped, err := s.b.Answer(r.Context(), r.PathValue("sessionId"), r.PathValue("decisionId"), s.opts.HostID, a)
	if v.Bridge == nil {
		v.Bridge = before.Bridge
	}
	if err != nil {
		s.failWith(w, r, err, v)
		return
	}
	status := http.StatusOK
	if v.Status == store.StatusOpen {
		status = http.StatusAccepted // a vote counted; the quorum is not met yet
	}
	writeJSON(w, status, AnswerResponse{View: v, Deduped: deduped})
}

// decodeAnswer reads {"optionId"?: string, "text"?: string, "scope"?:
// "ONCE"|"SESSION"|"ALWAYS"} strictly: no other member, no duplicate or
// case-variant key, strings only. The broker validates the scope.
func decodeAnswer(data []byte) (confirm.Answer, error) {
	var a confirm.Answer
	m, err := acp.DecodeObject(data, []string{"optionId", "text", "scope"}, true)
	if err != nil {
		return a, errors.New(UserMessage(err))
	}
	if raw, ok := m["optionId"]; ok {
		if a.OptionID, err = acp.DecodeString(raw, "optionId"); err != nil {
			return a, errors.New(UserMessage(err))
		}
	}
	if raw, ok := m["text"]; ok {
		if a.Text, err = acp.DecodeString(raw, "text"); err != nil {
			return a, errors.New(UserMessage(err))
		}
	}
	if raw, ok := m["scope"]; ok {
		scope, err := acp.DecodeString(raw, "scope")
		if err != nil {
			return a, errors.New(UserMessage(err))
		}
		a.Scope = policy.Scope(scope)
	}
	return a, nil
}

// answerQuestion answers a question with the body {"action", "content"?}
// ([question.DecodeAnswer], strict); the broker validates it against the
// question. A body that does not decode is 400 invalid_body, an answer the
// question refuses 400 invalid_answer naming the field.
func (s *server) answerQuestion(w http.ResponseWriter, r *http.Request, data []byte) {
	a, err := question.DecodeAnswer(data)
	if err != nil {
		var body ErrorBody
		body.Error.Code, body.Error.Message = "invalid_body", UserMessage(err)
		var fe *question.FieldError
		if errors.As(err, &fe) {
			body.Error.Field, body.Error.Reason = fe.Field, fe.Reason
		}
		writeJSON(w, http.StatusBadRequest, body)
		return
	}
	if _, ok := s.answerable(w, r); !ok {
		return
	}
	v, deduped, err := s.b.AnswerQuestion(r.Context(), r.PathValue("sessionId"), r.PathValue("decisionId"), s.opts.HostID, a)
	if err != nil {
		s.failWith(w, r, err, v)
		return
	}
	writeJSON(w, http.StatusOK, AnswerResponse{View: v, Deduped: deduped})
}

// ErrorBody is the body of every error response. Decision is set on 409 so
// a client sees how the decision ended. Field and Reason are set on a 400
// that refuses one field of a question's answer: Field is its path
// ("action", "content" or "content.NAME"), Reason what is wrong with it.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
		Reason  string `json:"reason,omitempty"`
	} `json:"error"`
	Decision *confirm.View `json:"decision,omitempty"`
}

func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.failWith(w, r, err, confirm.View{})
}

// failWith maps a broker error to its status code.
func (s *server) failWith(w http.ResponseWriter, r *http.Request, err error, v confirm.View) {
	var body ErrorBody
	status := http.StatusInternalServerError
	body.Error.Code, body.Error.Message = "internal", UserMessage(err)
	switch {
	case errors.Is(err, store.ErrNotFound):
		status, body.Error.Code = http.StatusNotFound, "not_found"
		if d, sid := r.PathValue("decisionId"), r.PathValue("sessionId"); d != "" && sid != "" {
			body.Error.Message = fmt.Sprintf("no decision %s in session %s", d, sid)
		}
	case errors.Is(err, confirm.ErrForbidden):
		status, body.Error.Code = http.StatusForbidden, "forbidden"
	case errors.Is(err, store.ErrDuplicateVote):
		status, body.Error.Code = http.StatusConflict, "duplicate_vote"
	case errors.Is(err, confirm.ErrStale):
		status, body.Error.Code = http.StatusConflict, "stale"
	case errors.Is(err, confirm.ErrConflict):
		status, body.Error.Code = http.StatusConflict, "conflict"
	case scopeError(err) != "":
		status, body.Error.Code = http.StatusBadRequest, scopeError(err)
	case errors.Is(err, confirm.ErrInvalidAnswer):
		status, body.Error.Code = http.StatusBadRequest, "invalid_answer"
		var fe *question.FieldError
		if errors.As(err, &fe) {
			body.Error.Field, body.Error.Reason = fe.Field, fe.Reason
		}
	default:
		// The cause (a store's SQL error, a driver's text) is for the
		// operator's log, never for the client: it can name tables, paths
		// and addresses.
		s.log.Error("httpapi: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		body.Error.Message = internalMessage
	}
	if status == http.StatusConflict && v.ID != "" {
		body.Decision = &v
	}
	writeJSON(w, status, body)
}

// internalMessage is the message of a 500 response: the error itself is
// logged.
const internalMessage = "acpmux could not serve this request (the error is in acpmux's log)"

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var body ErrorBody
	body.Error.Code, body.Error.Message = code, msg
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"encode response"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
