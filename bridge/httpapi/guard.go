package httpapi

import (
	"fmt"
	"html"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/store"
)

// guard is the one gate in front of every request: Host, Origin,
// Sec-Fetch-Site, then (except for GET /healthz) bearer token, then for requests with a body its media type
// and size. It is the handler New returns; the route-table test asserts it.
type guard struct {
	next     http.Handler
	hosts    map[string]bool // allowed Host header values, lower case
	tokenSum [32]byte        // sha256 of the token, so the compare is constant-time in its length too
	noToken  bool            // no --token-file token: only people's tokens (people.go)
	people   store.People    // Options.People, may be nil
}

// ServeHTTP runs the checks in order and passes the request on only if all
// pass; every refusal is a JSON error body, but for a browser opening the
// page without a right token (opensPage) a short HTML page saying how to
// open it (refusePage), still 401. All of them look at the request
// line and headers only: a refused request's body is never read, and its
// connection is closed after the response.
func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hosts[strings.ToLower(r.Host)] {
		refuse(w, http.StatusForbidden, "forbidden_host", "Host header is not this server's address (DNS rebinding protection)")
		return
	}
	if code, msg := g.checkOrigin(r); code != "" {
		refuse(w, http.StatusForbidden, code, msg)
		return
	}
	if serveHealth(w, r) { // healthz.go: no token, nothing but "ok"
		return
	}
	if r.URL.Path == "/" && r.URL.Query().Has("token") {
		g.exchangeToken(w, r)
		return
	}
	p, why := g.authenticate(r) // people.go
	if why != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="acpmux"`)
		if opensPage(r) {
			refusePage(w, why.code, why.msg)
			return
		}
		refuse(w, http.StatusUnauthorized, why.code, why.msg)
		return
	}
	markAuthenticated(r)
	r = r.WithContext(identity.WithPerson(r.Context(), p))
	if hasBody(r) && !isJSON(r.Header.Values("Content-Type")) {
		refuse(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "the body must be application/json")
		return
	}
	g.next.ServeHTTP(w, r)
}

// refuse writes an error and closes the connection after it without
// reading the body: net/http would otherwise read up to 256 KiB of an
// unread body, at the client's pace, before closing. The expired read
// deadline ends that read at once.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Connection", "close")
	writeError(w, status, code, msg)
	_ = http.NewResponseController(w).SetReadDeadline(time.Now()) // unsupported by httptest.ResponseRecorder
}

// limitBody serves h with a request body of at most max bytes (0: no
// body at all). A larger declared Content-Length, or any body where none is
// allowed, is 413 before h runs; a chunked body is cut at max bytes, and
// reading past it fails with *http.MaxBytesError.
func limitBody(max int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max || (max == 0 && r.ContentLength < 0) {
			refuse(w, http.StatusRequestEntityTooLarge, "body_too_large", "the body is larger than the limit of this route")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		h.ServeHTTP(w, r)
	})
}

// checkOrigin refuses a present Origin that is not exactly this server's
// origin (scheme, host and port as in the Host header), several Origin
// headers, and a cross-site or same-site Sec-Fetch-Site. A request without
// Origin (curl, the CLI) passes: the token still guards it.
func (g *guard) checkOrigin(r *http.Request) (code, msg string) {
	origins := r.Header.Values("Origin")
	if len(origins) > 1 {
		return "forbidden_origin", "more than one Origin header"
	}
	if len(origins) == 1 {
		scheme := "http://"
		if r.TLS != nil {
			scheme = "https://"
		}
		if origins[0] != scheme+strings.ToLower(r.Host) {
			return "forbidden_origin", "Origin is not this server's origin"
		}
	}
	for _, v := range r.Header.Values("Sec-Fetch-Site") {
		if v != "same-origin" && v != "none" {
			return "forbidden_origin", "cross-site request"
		}
	}
	return "", ""
}

// CookieName is the cookie that carries the token for the web page: set
// HttpOnly, SameSite=Strict, Path=/ when the page is first opened with
// ?token=TOKEN (docs/security.md).
const CookieName = "acpmux_token"

// ProtocolTokenPrefix marks the WebSocket subprotocol that carries the
// token: a client that cannot set headers offers "acpmux.bearer.TOKEN"
// together with "acp" in Sec-WebSocket-Protocol; acpmux selects "acp".
const ProtocolTokenPrefix = "acpmux.bearer."

// exchangeToken serves GET /?token=TOKEN, the link acpmux prints: a right
// token becomes the HttpOnly SameSite=Strict cookie and a 303 redirect to
// "/" takes it out of the address bar and history; a wrong one is 401.
func (g *guard) exchangeToken(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet {
		refuse(w, http.StatusUnauthorized, "unauthorized", "missing or wrong token")
		return
	}
	if _, why := g.person(r.Context(), r.URL.Query().Get("token")); why != nil {
		if opensPage(r) {
			refusePage(w, why.code, why.msg)
			return
		}
		refuse(w, http.StatusUnauthorized, why.code, why.msg)
		return
	}
	markAuthenticated(r)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: r.URL.Query().Get("token"), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func hasBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		return true
	}
	return r.ContentLength > 0 || len(r.TransferEncoding) > 0
}

// isJSON accepts exactly one Content-Type of application/json, optionally
// with charset=utf-8.
func isJSON(vals []string) bool {
	if len(vals) != 1 {
		return false
	}
	mt, params, err := mime.ParseMediaType(vals[0])
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return false
		}
	}
	return true
}

// allowedHosts returns the Host header values accepted for a server
// listening on addr: addr itself (unless its host is empty or unspecified),
// localhost, 127.0.0.1 and [::1] with addr's port (and without it for port
// 80), plus extra.
func allowedHosts(addr string, extra []string) map[string]bool {
	m := make(map[string]bool)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return m
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		m[strings.ToLower(net.JoinHostPort(host, port))] = true
	}
	for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
		m[net.JoinHostPort(h, port)] = true
	}
	if port == "80" {
		m["localhost"], m["127.0.0.1"], m["[::1]"] = true, true, true
	}
	for _, h := range extra {
		m[strings.ToLower(h)] = true
	}
	return m
}

// opensPage reports whether r is a browser opening the approvals page: a
// GET of "/" whose Accept names text/html.
func opensPage(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/" && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// refusePage answers a browser opening the page without a right token:
// 401 with a static HTML page (no script, nothing of the request in it)
// that says where the link with the token is, and the refusal's code and
// message.
func refusePage(w http.ResponseWriter, code, msg string) {
	h := w.Header()
	h.Set("Connection", "close")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprintf(w, tokenNeededPage, html.EscapeString(msg), html.EscapeString(code))
}

// tokenNeededPage is refusePage's body; its verbs are the refusal's
// message and code.
const tokenNeededPage = `<!doctype html>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>acpmux: open the link with the token</title>
<h1>acpmux approvals</h1>
<p>This page opens from its link with the token, which acpmux printed on its
stderr when it started: <code>acpmux: approvals page: http://HOST:PORT/?token=…</code>.
The token is also in the file of <code>--token-file</code> (by default
<code>$XDG_STATE_HOME/acpmux/token</code>): open <code>http://HOST:PORT/?token=</code>
followed by it.</p>
<p>Refused: %s (%s).</p>
`
