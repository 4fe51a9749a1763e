package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// limitedEventsServer serves GET /v1/events and GET /v1/ping behind the
// guard, with per-person tokens (olga and oscar observers, alice admin),
// on a LimitListener of maxConns connections.
func limitedEventsServer(t *testing.T, maxConns int) (base string, toks map[string]string) {
	t.Helper()
	st, err := sqlite.Open(sqlite.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	toks = map[string]string{}
	for name, role := range map[string]store.Role{"olga": store.RoleObserver, "oscar": store.RoleObserver, "alice": store.RoleAdmin} {
		toks[name] = personToken(name)
		if err := st.AddToken(context.Background(), store.Token{Name: name, Role: role, SHA256: store.TokenSHA256(toks[name]), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	src := &feedSource{Store: st, changed: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := httpapi.NewServer(httpapi.New(nil, httpapi.Options{Addr: ln.Addr().String(), Token: token, Logger: log, People: st,
		Routes: map[string]http.Handler{
			"GET /v1/events": httpapi.Events(src, httpapi.EventsOptions{}),
			"GET /v1/ping":   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("pong")) }),
		}}), log)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(httpapi.LimitListener(ln, maxConns, log)) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return "http://" + ln.Addr().String(), toks
}

// getAs sends GET path with tok on a connection of its own; a 200 event
// stream is left open until the test ends (its opening comment read).
func getAs(t *testing.T, base, tok, path string, header ...string) (int, string) {
	t.Helper()
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == 200 && resp.Header.Get("Content-Type") == "text/event-stream" {
		t.Cleanup(func() { resp.Body.Close() })
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() && sc.Text() != "" {
		}
		return 200, ""
	}
	defer resp.Body.Close()
	var body httpapi.ErrorBody
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Error.Code + ": " + body.Error.Message
}

// TestEventStreamsCannotLockOutTheOthers: with --max-connections 20, an
// observer gets 8 streams and a 429 too_many_streams for the 9th; the
// streams of everyone together stop at 10 (half of 20), a 429 that says
// so; the admin's requests still get through; a closed stream frees its
// place.
func TestEventStreamsCannotLockOutTheOthers(t *testing.T) {
	base, toks := limitedEventsServer(t, 20)
	for i := range httpapi.DefaultMaxStreamsPerPerson {
		if code, msg := getAs(t, base, toks["olga"], "/v1/events"); code != 200 {
			t.Fatalf("olga's stream %d: %d %s", i, code, msg)
		}
	}
	if code, msg := getAs(t, base, toks["olga"], "/v1/events"); code != http.StatusTooManyRequests || !strings.HasPrefix(msg, "too_many_streams: olga already has 8 event streams open") {
		t.Fatalf("olga's 9th stream: %d %q, want 429 too_many_streams naming olga", code, msg)
	}
	if code, msg := getAs(t, base, token, "/v1/events"); code != 200 {
		t.Fatalf("the --token-file token's stream: %d %s", code, msg)
	}
	if code, msg := getAs(t, base, toks["oscar"], "/v1/events"); code != 200 {
		t.Fatalf("oscar's stream: %d %s", code, msg)
	}
	if code, msg := getAs(t, base, toks["oscar"], "/v1/events"); code != http.StatusTooManyRequests || !strings.Contains(msg, "half of --max-connections 20") {
		t.Fatalf("the 11th stream in all: %d %q, want 429 too_many_streams (half of --max-connections)", code, msg)
	}
	for i := range 5 {
		if code, msg := getAs(t, base, toks["alice"], "/v1/ping"); code != 200 {
			t.Fatalf("the admin's request %d with 10 streams open: %d %s", i, code, msg)
		}
	}
}

// TestEventStreamsPerPersonFreedWhenClosed: the --token-file token, too,
// has at most 8 streams; closing one lets the next in.
func TestEventStreamsPerPersonFreedWhenClosed(t *testing.T) {
	base, _ := limitedEventsServer(t, 128)
	var first *http.Response
	for i := range httpapi.DefaultMaxStreamsPerPerson {
		req, _ := http.NewRequest("GET", base+"/v1/events", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("stream %d: %v %v", i, resp, err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() && sc.Text() != "" {
		}
		if i == 0 {
			first = resp
		} else {
			t.Cleanup(func() { resp.Body.Close() })
		}
	}
	if code, msg := getAs(t, base, token, "/v1/events"); code != http.StatusTooManyRequests || !strings.Contains(msg, httpapi.LegacyPerson+" already has 8") {
		t.Fatalf("9th stream of the --token-file token: %d %q", code, msg)
	}
	first.Body.Close()
	// The server learns of the close asynchronously (its background read
	// of the connection ends the request's context); no signal reaches
	// the test, so it retries until the place is free.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, msg := getAs(t, base, token, "/v1/events")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing a stream: %d %q", code, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEventsRefuseNonCanonicalOrRepeatedIDs: Last-Event-ID and after take
// only a canonical non-negative decimal, once.
func TestEventsRefuseNonCanonicalOrRepeatedIDs(t *testing.T) {
	base, _ := limitedEventsServer(t, 128)
	for _, tc := range []struct {
		name   string
		path   string
		header []string
		want   int
	}{
		{"header 0", "/v1/events", []string{"Last-Event-ID", "0"}, 200},
		{"header 17", "/v1/events", []string{"Last-Event-ID", "17"}, 200},
		{"after 3", "/v1/events?after=3", nil, 200},
		{"header -0", "/v1/events", []string{"Last-Event-ID", "-0"}, 400},
		{"header +3", "/v1/events", []string{"Last-Event-ID", "+3"}, 400},
		{"header 03", "/v1/events", []string{"Last-Event-ID", "03"}, 400},
		{"header overflow", "/v1/events", []string{"Last-Event-ID", "99999999999999999999"}, 400},
		{"header twice", "/v1/events", []string{"Last-Event-ID", "1", "Last-Event-ID", "2"}, 400},
		{"after +3", "/v1/events?after=%2B3", nil, 400},
		{"after -0", "/v1/events?after=-0", nil, 400},
		{"after 00", "/v1/events?after=00", nil, 400},
		{"after twice", "/v1/events?after=1&after=2", nil, 400},
	} {
		code, msg := getAs(t, base, token, tc.path, tc.header...)
		if code != tc.want || (tc.want == 400 && !strings.HasPrefix(msg, "invalid_last_event_id: ")) {
			t.Errorf("%s: %d %q, want %d", tc.name, code, msg, tc.want)
		}
	}
}
