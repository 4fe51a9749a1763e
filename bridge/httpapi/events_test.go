package httpapi_test

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// feedSource is a store's feed with the in-process change signal.
type feedSource struct {
	*sqlite.Store
	mu      sync.Mutex
	changed chan struct{}
}

func (f *feedSource) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *feedSource) add(t *testing.T, typ store.FeedType, decision string) int64 {
	t.Helper()
	ev, err := f.AppendFeed(context.Background(), store.FeedEvent{At: time.Now(), Type: typ, SessionID: "s1", DecisionID: decision})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	return ev.ID
}

func eventsServer(t *testing.T, opts httpapi.EventsOptions) (*feedSource, string) {
	t.Helper()
	st, err := sqlite.Open(sqlite.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	src := &feedSource{Store: st, changed: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.NewServer(httpapi.New(nil, httpapi.Options{Addr: ln.Addr().String(), Token: token,
		Logger: slog.New(slog.DiscardHandler), Routes: map[string]http.Handler{"GET /v1/events": httpapi.Events(src, opts)}}), nil)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return src, "http://" + ln.Addr().String()
}

// sse is one client connection to GET /v1/events.
type sse struct {
	resp  *http.Response
	lines *bufio.Scanner
}

func connectEvents(t *testing.T, base, lastID string) *sse {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /v1/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	c := &sse{resp: resp, lines: bufio.NewScanner(resp.Body)}
	c.next(t, "") // the opening comment: the stream is established
	return c
}

// next reads until a blank line and returns the event's "id: type", or
// the comment when want is a comment (":" prefix) and one came.
func (c *sse) next(t *testing.T, want string) string {
	t.Helper()
	var id, typ, comment string
	for c.lines.Scan() {
		l := c.lines.Text()
		switch {
		case l == "" && (id != "" || comment != ""):
			if id == "" {
				return comment
			}
			return id + " " + typ
		case strings.HasPrefix(l, "id: "):
			id = l[4:]
		case strings.HasPrefix(l, "event: "):
			typ = l[7:]
		case strings.HasPrefix(l, ":"):
			comment = l
		}
	}
	t.Fatalf("the stream ended waiting for %q", want)
	return ""
}

// TestEventsResumeWithLastEventID: a client reads two events, disconnects;
// two more happen; reconnecting with Last-Event-ID it gets exactly those
// two, from the store, then live ones.
func TestEventsResumeWithLastEventID(t *testing.T) {
	src, base := eventsServer(t, httpapi.EventsOptions{})
	old := src.add(t, store.FeedSessionStarted, "") // before the client: not sent without Last-Event-ID
	c := connectEvents(t, base, "")
	a := src.add(t, store.FeedDecisionOpened, "d1")
	b := src.add(t, store.FeedDecisionAnswered, "d1")
	for _, want := range []string{strconv.FormatInt(a, 10) + " decision.opened", strconv.FormatInt(b, 10) + " decision.answered"} {
		if got := c.next(t, want); got != want {
			t.Fatalf("got %q, want %q (the event %d from before connecting must not come)", got, want, old)
		}
	}
	c.resp.Body.Close()

	m1 := src.add(t, store.FeedDecisionClosed, "d1")
	m2 := src.add(t, store.FeedDecisionOpened, "d2")
	c = connectEvents(t, base, strconv.FormatInt(b, 10))
	live := make(chan int64, 1)
	for i, want := range []string{strconv.FormatInt(m1, 10) + " decision.closed", strconv.FormatInt(m2, 10) + " decision.opened"} {
		got := c.next(t, want)
		if got != want {
			t.Fatalf("missed event %d: got %q, want %q", i, got, want)
		}
		if i == 1 {
			live <- src.add(t, store.FeedSessionEnded, "")
		}
	}
	if got, want := c.next(t, "live"), strconv.FormatInt(<-live, 10)+" session.ended"; got != want {
		t.Fatalf("after the missed ones: %q, want exactly the live %q", got, want)
	}
}

// TestEventsNeedTheTokenAndBeatTheHeart: without the token 401; a bad
// Last-Event-ID 400; an idle stream gets heartbeat comments.
func TestEventsNeedTheTokenAndBeatTheHeart(t *testing.T) {
	_, base := eventsServer(t, httpapi.EventsOptions{Heartbeat: time.Millisecond})
	resp, err := http.Get(base + "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %v, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Last-Event-ID", "x")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad Last-Event-ID: %v, want 400", resp.StatusCode)
	}
	c := connectEvents(t, base, "")
	if got := c.next(t, ": heartbeat"); got != ": heartbeat" {
		t.Fatalf("idle stream: %q, want a heartbeat comment", got)
	}
}
