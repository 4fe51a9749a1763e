package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// receiver records the requests a notifier sends through its transport,
// answering each with the next status of statuses (then 200).
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      []*http.Request
	bodies   []string
}

func (rc *receiver) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(req.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.got = append(rc.got, req)
	rc.bodies = append(rc.bodies, string(b))
	code := http.StatusOK
	if len(rc.statuses) > 0 {
		code, rc.statuses = rc.statuses[0], rc.statuses[1:]
	}
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

func (rc *receiver) count() int { rc.mu.Lock(); defer rc.mu.Unlock(); return len(rc.got) }

func testNotifier(rc *receiver, urls ...string) *notifier {
	n := newNotifier(urls, defaultNotifyAfter, "acpmux@box (agent)", slog.New(slog.DiscardHandler))
	n.client = &http.Client{Transport: rc}
	n.page = "http://127.0.0.1:7777/"
	return n
}

var waitingSnapshot = confirm.Snapshot{SessionID: "s1", Title: "Run tests", Command: "go test ./...\necho second line"}

// TestNotifyFiresAfterTheWait: a decision still open after --notify-after
// (30 s by default) is posted once to each URL, not before; the notice is
// ntfy's plain text form with Title and Click headers, names the bridge,
// the session and the command's first line, and holds no token.
func TestNotifyFiresAfterTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := &receiver{}
		n := testNotifier(rc, "https://ntfy.example/a", "https://ntfy.example/b")
		done := make(chan struct{})
		n.watch(done, func() bool { return true }, func() notice { return n.noticeFor(waitingSnapshot, time.Now()) })
		time.Sleep(defaultNotifyAfter - time.Second)
		synctest.Wait()
		if c := rc.count(); c != 0 {
			t.Fatalf("%d notices before --notify-after, want 0", c)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if c := rc.count(); c != 2 {
			t.Fatalf("%d notices after --notify-after, want one per URL (2)", c)
		}
		req, body := rc.got[0], rc.bodies[0]
		if req.Method != "POST" || !strings.HasPrefix(req.Header.Get("Title"), "acpmux: permission request waiting on acpmux@box (agent)") ||
			req.Header.Get("Click") != "http://127.0.0.1:7777/" || !strings.HasPrefix(req.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("request %s with headers %v", req.Method, req.Header)
		}
		for _, want := range []string{"go test ./...\n", "session s1", "acpmux@box (agent)", "http://127.0.0.1:7777/\n"} {
			if !strings.Contains(body, want) {
				t.Errorf("body %q lacks %q", body, want)
			}
		}
		if strings.Contains(body, "second line") || strings.Contains(body, "token") {
			t.Errorf("body %q: only the command's first line, and no token", body)
		}
		close(done)
		n.close()
	})
}

// TestNotifySkipsClosedDecisions: a decision that closes before the wait
// ends, or that is no longer open when it ends, sends nothing.
func TestNotifySkipsClosedDecisions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := &receiver{}
		n := testNotifier(rc, "https://ntfy.example/a")
		done := make(chan struct{})
		n.watch(done, func() bool { return true }, func() notice { return notice{} })
		n.watch(make(chan struct{}), func() bool { return false }, func() notice { return notice{} })
		time.Sleep(time.Second)
		close(done)
		time.Sleep(time.Minute)
		synctest.Wait()
		if c := rc.count(); c != 0 {
			t.Errorf("%d notices for closed decisions, want 0", c)
		}
		n.close()
	})
}

// TestNotifyRetriesBounded: a 5xx or 429 answer is retried, at most three
// attempts in all with backoff; another 4xx is not retried.
func TestNotifyRetriesBounded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		statuses []int
		want     int
	}{
		{"ok at once", nil, 1},
		{"ok on the third", []int{503, 429}, 3},
		{"always failing", []int{500, 502, 503, 504, 500}, 3},
		{"refused", []int{403}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rc := &receiver{statuses: tc.statuses}
				n := testNotifier(rc, "https://ntfy.example/a")
				defer n.close()
				n.watch(make(chan struct{}), func() bool { return true }, func() notice { return notice{title: "t", body: "b"} })
				time.Sleep(defaultNotifyAfter + notifyBackoff[0]/2)
				synctest.Wait()
				if c := rc.count(); c != 1 {
					t.Fatalf("first attempt: %d requests, want 1", c)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				if c := rc.count(); c != tc.want {
					t.Errorf("%d attempts, want %d", c, tc.want)
				}
			})
		})
	}
}

// TestNotifyThroughTheBinary: "acpmux run --listen --notify URL
// --notify-after 100ms" posts to a local receiver while a permission
// request waits: the command, the page's address as Click, no token.
func TestNotifyThroughTheBinary(t *testing.T) {
	got := make(chan *http.Request, 4)
	bodies := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		got <- req
		bodies <- string(b)
	}))
	defer srv.Close()
	r := startRelayProcess(t, permAgentScript, "--state", ":memory:", "--notify", srv.URL+"/topic", "--notify-after", "100ms")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	r.waitFor(t, "session/request_permission")
	var req *http.Request
	select {
	case req = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("no notice within 30 s of a decision waiting past --notify-after 100ms")
	}
	body := <-bodies
	if req.URL.Path != "/topic" || req.Header.Get("Click") != r.apiURL+"/" || !strings.Contains(body, "touch x\n") || !strings.Contains(body, "session s1") {
		t.Errorf("notice %s %v %q", req.URL.Path, req.Header, body)
	}
	if strings.Contains(body, r.token) || strings.Contains(strings.Join(req.Header.Values("Click"), ""), r.token) || strings.Contains(req.Header.Get("Title"), r.token) {
		t.Errorf("the notice carries the token: %v %q", req.Header, body)
	}
}
