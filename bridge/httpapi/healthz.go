package httpapi

import "net/http"

// HealthPath is the liveness route: GET or HEAD answers 200 with the body
// "ok\n" and no other information, without the bearer token (a monitor
// holds no secret). The guard's Host and Origin checks still apply; other
// methods need the token like every other route. See docs/security.md.
const HealthPath = "/healthz"

// serveHealth answers a liveness probe and reports whether it did.
func serveHealth(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != HealthPath || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write([]byte("ok\n"))
	}
	return true
}
