package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm"
)

const (
	testAddr  = "127.0.0.1:7777"
	testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

func testHandler(t *testing.T) http.Handler {
	t.Helper()
	b, err := confirm.NewBroker(confirm.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return New(b, Options{Addr: testAddr, Token: testToken, MaxBodyBytes: 1024, Logger: slog.New(slog.DiscardHandler)})
}

// pathOf fills a route pattern's wildcards.
func pathOf(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.NewReplacer("{sessionId}", "sess_1", "{decisionId}", "d1").Replace(path)
	return method, path
}

// Every route of the table, every unknown path and every wrong method is
// refused without the token: nothing answers before the guard.
func TestRouteTableIsGuarded(t *testing.T) {
	h := testHandler(t)
	if _, ok := h.(*guard); !ok {
		t.Fatalf("New returned %T, not the guard", h)
	}
	var targets [][2]string
	for _, rt := range routes {
		m, p := pathOf(rt.pattern)
		targets = append(targets, [2]string{m, p}, [2]string{http.MethodDelete, p}, [2]string{http.MethodOptions, p})
	}
	targets = append(targets, [2]string{"GET", "/"}, [2]string{"GET", "/v1/unknown"}, [2]string{"GET", "/v1/sessions/x/decisions/y/z"})
	for _, tg := range targets {
		r := httptest.NewRequest(tg[0], tg[1], strings.NewReader(`{}`))
		r.Host = testAddr
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s without token: %d, want 401", tg[0], tg[1], w.Code)
		}
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s %s: CORS header set", tg[0], tg[1])
		}
	}
	if len(routes) != 6 {
		t.Errorf("route table has %d routes; update this test and docs/decisions.md", len(routes))
	}
}

func TestGuard(t *testing.T) {
	bearer := "Bearer " + testToken
	body := `{"optionId":"allow-once"}`
	tests := []struct {
		name    string
		method  string
		host    string
		headers [][2]string
		body    string
		want    int
	}{
		{"ok", "GET", "", nil, "", 200},
		{"ok localhost", "GET", "localhost:7777", nil, "", 200},
		{"ok ipv6 loopback", "GET", "[::1]:7777", nil, "", 200},
		{"ok own origin", "GET", "", [][2]string{{"Origin", "http://127.0.0.1:7777"}, {"Sec-Fetch-Site", "same-origin"}}, "", 200},
		{"no token", "GET", "", [][2]string{{"Authorization", ""}}, "", 401},
		{"wrong token", "GET", "", [][2]string{{"Authorization", "Bearer " + strings.Repeat("0", 64)}}, "", 401},
		{"token prefix", "GET", "", [][2]string{{"Authorization", "Bearer " + testToken[:10]}}, "", 401},
		{"basic scheme", "GET", "", [][2]string{{"Authorization", "Basic " + testToken}}, "", 401},
		{"token in query only", "GET", "", [][2]string{{"Authorization", ""}}, "", 401},
		{"two authorization headers", "GET", "", [][2]string{{"Authorization", bearer}, {"+Authorization", "Bearer x"}}, "", 401},
		{"foreign origin", "GET", "", [][2]string{{"Origin", "https://evil.example"}}, "", 403},
		{"origin null", "GET", "", [][2]string{{"Origin", "null"}}, "", 403},
		{"empty origin", "GET", "", [][2]string{{"Origin", ""}}, "", 403},
		{"good then bad origin", "GET", "", [][2]string{{"Origin", "http://127.0.0.1:7777"}, {"+Origin", "https://evil.example"}}, "", 403},
		{"bad then good origin", "GET", "", [][2]string{{"Origin", "https://evil.example"}, {"+Origin", "http://127.0.0.1:7777"}}, "", 403},
		{"lookalike localhost.evil.com", "GET", "", [][2]string{{"Origin", "http://localhost.evil.com"}}, "", 403},
		{"lookalike nip.io", "GET", "", [][2]string{{"Origin", "http://127.0.0.1.nip.io:7777"}}, "", 403},
		{"origin prefix", "GET", "", [][2]string{{"Origin", "http://127.0.0.1:77771"}}, "", 403},
		{"origin wrong port", "GET", "", [][2]string{{"Origin", "http://127.0.0.1:8080"}}, "", 403},
		{"origin https", "GET", "", [][2]string{{"Origin", "https://127.0.0.1:7777"}}, "", 403},
		{"origin other loopback name", "GET", "", [][2]string{{"Origin", "http://localhost:7777"}}, "", 403},
		{"origin non-ascii", "GET", "", [][2]string{{"Origin", "http://127.0.0.1:7777\u200b"}}, "", 403},
		{"cross-site fetch", "GET", "", [][2]string{{"Sec-Fetch-Site", "cross-site"}}, "", 403},
		{"same-site fetch", "GET", "", [][2]string{{"Sec-Fetch-Site", "same-site"}}, "", 403},
		{"foreign host (DNS rebinding)", "GET", "rebind.example:7777", [][2]string{{"Origin", "http://rebind.example:7777"}}, "", 403},
		{"foreign host without origin", "GET", "attacker.example:7777", nil, "", 403},
		{"loopback wrong port", "GET", "127.0.0.1:8080", nil, "", 403},
		{"host without port", "GET", "127.0.0.1", nil, "", 403},
		{"text/plain post", "POST", "", [][2]string{{"Content-Type", "text/plain"}}, body, 415},
		{"form post", "POST", "", [][2]string{{"Content-Type", "application/x-www-form-urlencoded"}}, "optionId=allow-once", 415},
		{"multipart post", "POST", "", [][2]string{{"Content-Type", "multipart/form-data; boundary=x"}}, body, 415},
		{"no content type", "POST", "", [][2]string{{"Content-Type", ""}}, body, 415},
		{"json with other charset", "POST", "", [][2]string{{"Content-Type", "application/json; charset=latin1"}}, body, 415},
		{"cross-site text/plain post", "POST", "", [][2]string{{"Content-Type", "text/plain"}, {"Origin", "https://evil.example"}, {"Sec-Fetch-Site", "cross-site"}}, body, 403},
		{"oversize body", "POST", "", nil, `{"optionId":"` + strings.Repeat("a", 2000) + `"}`, 413},
		{"unknown field", "POST", "", nil, `{"optionId":"allow-once","approve":true}`, 400},
		{"case-variant key", "POST", "", nil, `{"OptionId":"allow-once"}`, 400},
		{"duplicate key", "POST", "", nil, `{"optionId":"reject-once","optionId":"allow-once"}`, 400},
		{"not an object", "POST", "", nil, `["allow-once"]`, 400},
		{"optionId not a string", "POST", "", nil, `{"optionId":1}`, 400},
		{"json post reaches the route", "POST", "", [][2]string{{"Content-Type", "application/json; charset=utf-8"}}, body, 404},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/v1/capabilities"
			if tt.method == "POST" {
				path = "/v1/sessions/s/decisions/d"
			}
			r := httptest.NewRequest(tt.method, path, strings.NewReader(tt.body))
			r.Host = testAddr
			if tt.host != "" {
				r.Host = tt.host
			}
			r.Header.Set("Authorization", bearer)
			if tt.method == "POST" {
				r.Header.Set("Content-Type", "application/json")
			}
			for _, kv := range tt.headers {
				if k, ok := strings.CutPrefix(kv[0], "+"); ok {
					r.Header.Add(k, kv[1])
				} else if kv[1] == "" && kv[0] != "Origin" {
					r.Header.Del(kv[0])
				} else {
					r.Header.Set(kv[0], kv[1])
				}
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				b, _ := io.ReadAll(w.Body)
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, b)
			}
			if w.Header().Get("Access-Control-Allow-Origin") != "" {
				t.Fatal("CORS header set")
			}
			if got := w.Header().Get("Content-Type"); got != "application/json" {
				t.Fatalf("Content-Type %q", got)
			}
			if strings.Contains(w.Body.String(), testToken) {
				t.Fatal("the token was echoed")
			}
		})
	}
}

func TestChunkedOversizeBody(t *testing.T) {
	h := testHandler(t)
	r := httptest.NewRequest("POST", "/v1/sessions/s/decisions/d", io.MultiReader(strings.NewReader(`{"text":"`), strings.NewReader(strings.Repeat("x", 4096)), strings.NewReader(`"}`)))
	r.ContentLength = -1 // unknown length: the cap applies while reading
	r.Host = testAddr
	r.Header.Set("Authorization", "Bearer "+testToken)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
}

func TestAllowedHosts(t *testing.T) {
	tests := []struct {
		addr  string
		extra []string
		ok    []string
		bad   []string
	}{
		{"127.0.0.1:7777", nil, []string{"127.0.0.1:7777", "localhost:7777", "LOCALHOST:7777", "[::1]:7777"}, []string{"127.0.0.1", "0.0.0.0:7777", "evil:7777"}},
		{"0.0.0.0:7777", []string{"box.lan:7777"}, []string{"localhost:7777", "box.lan:7777"}, []string{"0.0.0.0:7777", "box.lan:80"}},
		{"192.168.1.5:9000", nil, []string{"192.168.1.5:9000", "127.0.0.1:9000"}, []string{"192.168.1.5:7777"}},
		{"127.0.0.1:80", nil, []string{"localhost", "127.0.0.1", "[::1]", "localhost:80"}, []string{"evil"}},
		{"bad", nil, nil, []string{"localhost:7777", ""}},
	}
	for _, tt := range tests {
		m := allowedHosts(tt.addr, tt.extra)
		for _, h := range tt.ok {
			if !m[strings.ToLower(h)] {
				t.Errorf("%s: Host %q refused", tt.addr, h)
			}
		}
		for _, h := range tt.bad {
			if m[strings.ToLower(h)] {
				t.Errorf("%s: Host %q allowed", tt.addr, h)
			}
		}
	}
}

func TestEmptyTokenRefusesAll(t *testing.T) {
	h := New(nil, Options{Addr: testAddr})
	r := httptest.NewRequest("GET", "/v1/capabilities", nil)
	r.Host = testAddr
	r.Header.Set("Authorization", "Bearer ")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status %d", w.Code)
	}
}
