package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHealthzNeedsNoTokenAndSaysOnlyOK: GET /healthz answers 200 "ok\n"
// without a token and with nothing else in it; the guard's other checks
// still apply, and other methods need the token.
func TestHealthzNeedsNoTokenAndSaysOnlyOK(t *testing.T) {
	h := testHandler(t)
	for _, tt := range []struct {
		name, method, host, origin string
		want                       int
		body                       string
	}{
		{"get", "GET", testAddr, "", 200, "ok\n"},
		{"head", "HEAD", testAddr, "", 200, ""},
		{"post needs the token", "POST", testAddr, "", 401, ""},
		{"foreign Host", "GET", "evil.example:7777", "", 403, ""},
		{"cross-origin", "GET", testAddr, "http://evil.example", 403, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/healthz", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d (body %q)", w.Code, tt.want, w.Body.String())
			}
			if tt.want == 200 && w.Body.String() != tt.body {
				t.Errorf("body %q, want %q", w.Body.String(), tt.body)
			}
		})
	}
	// Nothing beyond ok: the same bytes whether or not a token is sent.
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.Host = testAddr
	r.Header.Set("Authorization", "Bearer "+testToken)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Body.String() != "ok\n" {
		t.Errorf("with the token: %d %q, want 200 \"ok\\n\"", w.Code, w.Body.String())
	}
}
