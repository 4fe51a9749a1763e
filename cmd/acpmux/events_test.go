package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// watchLines runs decisions watch (--json when asJSON) against base with
// token in the background and returns its output lines; it stops with
// the test.
func watchLines(t *testing.T, base, token string, after int64, asJSON bool) <-chan string {
	t.Helper()
	return watchLinesTo(t, base, token, after, asJSON, io.Discard)
}

// watchLinesTo is watchLines writing watch's own messages to errw.
func watchLinesTo(t *testing.T, base, token string, after int64, asJSON bool, errw io.Writer) <-chan string {
	t.Helper()
	c, err := newAPIClient(decisionsFlags{url: base + "/?token=" + token, timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.watchEvents(ctx, pw, errw, after, asJSON)
		pw.Close()
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cancel()
		pr.Close()
		<-done
	})
	return lines
}

// TestEventsOfARelaySession runs "acpmux run --listen" with a scripted
// agent that asks one permission, and follows GET /v1/events with
// "acpmux decisions watch --json" from the start of the store: session
// started, decision opened, answered (by the IDE, with its optionId) and
// closed come in that order, each naming the relay's bridge (bridgeId, the
// id GET /v1/sessions gives it); session.ended is in the store after the
// relay exits.
func TestEventsOfARelaySession(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	r := startRelayProcess(t, metricsAgentScript, "--state", state)
	lines := watchLines(t, r.apiURL, r.token, 0, true)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	perm := r.waitFor(t, "session/request_permission")
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": perm["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}})
	r.send(t, string(b))
	r.waitFor(t, "")

	var sessions struct {
		Sessions []struct {
			Bridge struct{ ID string }
		}
	}
	if code := (api{r.apiURL, r.token}).do(t, "GET", "/v1/sessions", "", &sessions); code != 200 || len(sessions.Sessions) != 1 || sessions.Sessions[0].Bridge.ID == "" {
		t.Fatalf("sessions: %d %+v, want one with its bridge", code, sessions)
	}
	bridgeID := sessions.Sessions[0].Bridge.ID
	var last int64
	for _, want := range []struct {
		typ  store.FeedType
		data string
	}{
		{store.FeedSessionStarted, `"cwd":"/tmp"`},
		{store.FeedDecisionOpened, `"command":"touch x"`},
		{store.FeedDecisionAnswered, `"optionId":"allow","resolvedBy":"stdio"`},
		{store.FeedDecisionClosed, `"status":"answered"`},
	} {
		line := <-lines
		var ev store.FeedEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("watch --json line %q: %v", line, err)
		}
		if ev.Type != want.typ || ev.ID <= last || ev.SessionID != "s1" || ev.BridgeID != bridgeID || !strings.Contains(string(ev.Data), want.data) {
			t.Fatalf("event %s, want %s of bridge %s with %s after id %d", line, want.typ, bridgeID, want.data, last)
		}
		last = ev.ID
	}
	r.stdin.Close()
	r.cmd.Wait()
	st, err := sqlite.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := st.FeedAfter(context.Background(), last, 10)
	if err != nil || len(evs) != 1 || evs[0].Type != store.FeedSessionEnded || evs[0].SessionID != "s1" {
		t.Fatalf("after the relay exited: %+v, err %v; want one session.ended of s1", evs, err)
	}
}

// TestDecisionsWatchReconnectsWhereItLeftOff: the server drops the
// stream; decisions watch reconnects with Last-Event-ID and prints each
// event once, in order, also those that happened while it was away.
func TestDecisionsWatchReconnectsWhereItLeftOff(t *testing.T) {
	watchBackoff = time.Millisecond
	st, err := sqlite.Open(sqlite.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	feed := newFeedWriter(st, "", slog.New(slog.DiscardHandler))
	var mu sync.Mutex
	var lastIDs []string
	h := httpapi.Events(feed, httpapi.EventsOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the watch's cleanup, which ends its stream
	add := func(typ store.FeedType, d string) {
		if _, err := feed.AppendFeed(context.Background(), store.FeedEvent{At: time.Now(), Type: typ, SessionID: "s1", DecisionID: d}); err != nil {
			t.Fatal(err)
		}
	}
	add(store.FeedDecisionOpened, "d1")
	var msgs lockedBuffer
	lines := watchLinesTo(t, srv.URL, "tok", 0, false, &msgs)
	if l := <-lines; !strings.Contains(l, "#1       decision.opened") || !strings.Contains(l, "s1  d1") {
		t.Fatalf("first line %q", l)
	}
	srv.CloseClientConnections()
	add(store.FeedDecisionClosed, "d1")
	add(store.FeedDecisionOpened, "d2")
	for _, want := range []string{"#2       decision.closed", "#3       decision.opened"} {
		if l := <-lines; !strings.Contains(l, want) {
			t.Fatalf("after reconnecting: %q, want %q", l, want)
		}
	}
	if m := msgs.String(); !strings.Contains(m, "the event stream broke off (the bridge or inbox stopped?); reconnecting") || strings.Contains(m, "unexpected EOF") {
		t.Fatalf("watch's message when the stream broke: %q", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lastIDs) < 2 || lastIDs[0] != "0" || lastIDs[len(lastIDs)-1] != "1" {
		t.Fatalf("Last-Event-ID of the connections: %q, want 0 then 1", lastIDs)
	}
}

// TestWatchLinesKeepTheirColumns: the event type starts at the same column
// whatever the event id's digits (up to six), so a person can scan a
// long watch.
func TestWatchLinesKeepTheirColumns(t *testing.T) {
	at := time.Now()
	col := -1
	for _, id := range []int64{1, 42, 987, 123456} {
		l := eventLine(store.FeedEvent{ID: id, At: at, Type: store.FeedDecisionOpened, SessionID: "s1", DecisionID: "d1"})
		c := strings.Index(l, string(store.FeedDecisionOpened))
		if col == -1 {
			col = c
		}
		if c != col {
			t.Fatalf("id %d: type at column %d, want %d:\n%s", id, c, col, l)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
