package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A browser opening the page without a right token gets 401 with a short
// HTML page that says where the link with the token is (no script,
// nothing of the request in it); the API, curl and a wrong ?token= from a
// script still get the JSON error body.
func TestPageWithoutTokenTellsTheBrowserWhereTheLinkIs(t *testing.T) {
	h := testHandler(t)
	browser := "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, tt := range []struct {
		name, target, accept string
		html                 bool
	}{
		{"browser, no token", "/", browser, true},
		{"browser, wrong ?token=", "/?token=<script>alert(1)</script>", browser, true},
		{"curl, no token", "/", "*/*", false},
		{"script, wrong ?token=", "/?token=wrong", "", false},
		{"browser, API route", "/v1/sessions", browser, false},
	} {
		req := httptest.NewRequest("GET", "http://"+testAddr+tt.target, nil)
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", tt.name, rec.Code)
		}
		body := rec.Body.String()
		if !tt.html {
			var e ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code != "unauthorized" {
				t.Errorf("%s: body %q, want the JSON error unauthorized", tt.name, body)
			}
			continue
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", tt.name, ct)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != "default-src 'none'" {
			t.Errorf("%s: Content-Security-Policy %q", tt.name, csp)
		}
		if !strings.Contains(body, "acpmux: approvals page: http://HOST:PORT/?token=") || strings.Contains(body, "<script") ||
			!strings.Contains(body, "(unauthorized)") {
			t.Errorf("%s: body %q, want the page naming the link and no script", tt.name, body)
		}
	}
}
