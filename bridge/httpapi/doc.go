// Package httpapi is the decisions HTTP API of acpmux: a background
// channel through which a browser, a phone or a script lists the sessions and
// pending permission decisions of one acpmux process and answers them.
//
// Routes (JSON in camelCase; docs/decisions.md, "HTTP API"):
//
//	GET  /v1/capabilities
//	GET  /v1/sessions
//	GET  /v1/sessions/{sessionId}/decisions
//	GET  /v1/sessions/{sessionId}/decisions/{decisionId}
//	POST /v1/sessions/{sessionId}/decisions/{decisionId}   {"optionId"?, "text"?}
//	GET  /healthz   200 "ok\n", the one route without the token
//
// Invariants (docs/security.md): one guard wraps every request before it is
// routed, so no route, unknown path or wrong method answers without it; the
// guard refuses a Host header that is not the listen address or a loopback
// name with the listen port (403, DNS rebinding), a present Origin that is
// not exactly the server's own origin (403), a cross-site Sec-Fetch-Site
// (403), a missing or wrong bearer token (401, constant-time compare), a
// body that is not application/json (415) or is larger than its route's
// limit (413; only the answer route takes a body). A refused request's body
// is never read. [NewServer] and [LimitListener] bound the time a client
// may take and the connections open at once.
// Answers are decoded strictly: unknown members and duplicate or
// case-variant keys are 400. No response carries CORS headers.
package httpapi
