// Package web serves acpmux's approval page: one HTML file, one script and
// one style sheet, embedded in the binary (no build step at run time). The
// page is an ACP host over the /acp WebSocket: it attaches to every session
// (GET /v1/sessions), shows the live transcript and each pending
// permission request with its warnings and exactly the offered options, and
// answers with the option the user clicks. All agent-supplied text is set
// with textContent, never parsed as HTML, under a strict
// Content-Security-Policy with no inline script.
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed index.html static
var files embed.FS

// ContentSecurityPolicy is sent with every page response: scripts, styles
// and connections only from the page's own origin, nothing inline, no
// frames, no forms, no base URI.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// secure sets the headers every page response carries.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// Index serves the page (route "GET /{$}").
func Index() http.Handler {
	return secure(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := files.ReadFile("index.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
}

// Static serves the script and style sheet (route "GET /static/").
func Static() http.Handler {
	sub, _ := fs.Sub(files, ".")
	return secure(http.FileServerFS(sub))
}
