package bridge_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/acpmux/acpmux/bridge"
)

// wsHost is a remote host on /acp, driven with gorilla/websocket, an
// implementation independent of the coder/websocket server.
type wsHost struct {
	t *testing.T
	c *websocket.Conn
}

func (f *brokerFixture) wsURL() string { return "ws" + strings.TrimPrefix(f.api.URL, "http") + "/acp" }

func (f *brokerFixture) dial(hdr http.Header) (*wsHost, *http.Response, error) {
	c, resp, err := websocket.DefaultDialer.Dial(f.wsURL(), hdr)
	if err != nil {
		return nil, resp, err
	}
	f.t.Cleanup(func() { c.Close() })
	return &wsHost{t: f.t, c: c}, resp, nil
}

func (f *brokerFixture) authHeader() http.Header {
	return http.Header{"Authorization": {"Bearer " + f.token}}
}

func (h *wsHost) send(s string) {
	h.t.Helper()
	if err := h.c.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		h.t.Fatal(err)
	}
}

func (h *wsHost) next() map[string]any {
	h.t.Helper()
	h.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := h.c.ReadMessage()
	if err != nil {
		h.t.Fatalf("ws read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		h.t.Fatalf("ws got non-JSON %q", data)
	}
	return m
}

func (h *wsHost) nextMethod(method string) map[string]any {
	h.t.Helper()
	for {
		if m := h.next(); m["method"] == method {
			return m
		}
	}
}

// TestWebSocketAuth: the token, Host and Origin rules hold before the
// upgrade; the token may come as a bearer header, a cookie or a
// Sec-WebSocket-Protocol entry, never in the query string.
func TestWebSocketAuth(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+"waiteof\n", time.Minute, true)
	host := strings.TrimPrefix(f.api.URL, "http://")
	_, port, _ := strings.Cut(host, ":")
	cases := []struct {
		name string
		hdr  http.Header
		url  string
		want int
	}{
		{"no token", http.Header{}, "", 401},
		{"wrong token", http.Header{"Authorization": {"Bearer nope"}}, "", 401},
		{"token in query only", http.Header{}, "?token=" + f.token, 401},
		{"foreign origin", http.Header{"Authorization": {"Bearer " + f.token}, "Origin": {"https://evil.example"}}, "", 403},
		{"null origin", http.Header{"Authorization": {"Bearer " + f.token}, "Origin": {"null"}}, "", 403},
		{"lookalike origin", http.Header{"Authorization": {"Bearer " + f.token}, "Origin": {"http://127.0.0.1.nip.io:" + port}}, "", 403},
		{"wrong port origin", http.Header{"Authorization": {"Bearer " + f.token}, "Origin": {"http://127.0.0.1:1"}}, "", 403},
		{"https origin", http.Header{"Authorization": {"Bearer " + f.token}, "Origin": {"https://" + host}}, "", 403},
		{"rebinding host", http.Header{"Authorization": {"Bearer " + f.token}, "Host": {"rebind.example:" + port}, "Origin": {"http://rebind.example:" + port}}, "", 403},
		{"bearer header", http.Header{"Authorization": {"Bearer " + f.token}}, "", 101},
		{"same origin and cookie", http.Header{"Cookie": {"acpmux_token=" + f.token}, "Origin": {"http://" + host}}, "", 101},
		{"subprotocol token", http.Header{"Sec-Websocket-Protocol": {"acp, acpmux.bearer." + f.token}}, "", 101},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := tc.hdr.Clone()
			d := *websocket.DefaultDialer
			if p := hdr.Get("Sec-Websocket-Protocol"); p != "" {
				d.Subprotocols = strings.Split(strings.ReplaceAll(p, " ", ""), ",")
				hdr.Del("Sec-Websocket-Protocol")
			}
			if h := hdr.Get("Host"); h != "" {
				hdr.Del("Host")
				hdr["Host"] = []string{h}
			}
			c, resp, err := d.Dial(f.wsURL()+tc.url, hdr)
			code := 0
			if resp != nil {
				code = resp.StatusCode
			}
			if c != nil {
				defer c.Close()
				if resp.Header.Get(bridge.HeaderConnectionID) == "" {
					t.Error("no Acp-Connection-Id header on the upgrade")
				}
			}
			if code != tc.want {
				t.Errorf("status %d (err %v), want %d", code, err, tc.want)
			}
		})
	}
}

// TestWebSocketAttachPolicies: a remote host attaches with each history
// policy and gets the replay and/or the pending permission request.
func TestWebSocketAttachPolicies(t *testing.T) {
	script := permScriptHead +
		`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hel"}}}}` + "\n" +
		`send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"lo"}}}}` + "\n" +
		permRequest(1) + "waiteof\n"
	f := newBrokerFixture(t, script, time.Minute, true)
	expectPermission(t, f.ide)
	for _, tc := range []struct {
		policy     string
		wantReplay bool
		wantPerm   bool
	}{{"full", true, true}, {"pending_only", false, true}, {"none", false, false}} {
		t.Run(tc.policy, func(t *testing.T) {
			h, _, err := f.dial(f.authHeader())
			if err != nil {
				t.Fatal(err)
			}
			h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
			if m := h.next(); m["result"] == nil {
				t.Fatalf("initialize: %v", m)
			}
			h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/attach","params":{"sessionId":"s1","historyPolicy":%q}}`, tc.policy))
			if m := h.next(); m["result"].(map[string]any)["historyPolicy"] != tc.policy {
				t.Fatalf("attach: %v", m)
			}
			// A marker from the IDE's side: anything before it was replay.
			h.send(`{"jsonrpc":"2.0","id":3,"method":"session/attach","params":{"sessionId":"nope"}}`)
			var replay string
			var perm bool
			for {
				m := h.next()
				if m["id"] == 3.0 {
					break
				}
				if m["method"] == "session/update" {
					u := m["params"].(map[string]any)["update"].(map[string]any)
					replay += u["sessionUpdate"].(string)[:1] + u["content"].(map[string]any)["text"].(string)
				}
				if m["method"] == "session/request_permission" {
					perm = true
				}
			}
			// u: the IDE's prompt, a: the agent's two chunks, coalesced.
			if (replay == "ugoahello") != tc.wantReplay || perm != tc.wantPerm {
				t.Errorf("replay %q, permission %v; want replay %v, permission %v", replay, perm, tc.wantReplay, tc.wantPerm)
			}
		})
	}
}

// TestWebSocketAnswerWins: a remote WebSocket host's answer reaches the
// agent; the IDE's copy is withdrawn with $/cancel_request and the notice.
func TestWebSocketAnswerWins(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+permRequest(1)+"recv\nwaiteof\n", time.Minute, true)
	ideID, _ := expectPermission(t, f.ide)
	h, _, err := f.dial(f.authHeader())
	if err != nil {
		t.Fatal(err)
	}
	h.send(`{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"s1","historyPolicy":"pending_only"}}`)
	perm := h.nextMethod("session/request_permission")
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":%s}`, perm["id"], selectedReject))
	if got := f.waitAgent(1); got != selectedReject {
		t.Errorf("agent got %s", got)
	}
	for {
		m := f.ide.next()
		if m["method"] == "$/cancel_request" && m["params"].(map[string]any)["requestId"] == ideID {
			break
		}
	}
	n := f.ide.next()
	if n["method"] != bridge.MethodPermissionResolved || n["params"].(map[string]any)["resolvedBy"] == "ide" {
		t.Errorf("IDE got %v, want the resolved notice naming the WebSocket host", n)
	}
}

// TestStalledWebSocketHostIsDropped: a remote host that never reads while
// the agent streams 50 MB is disconnected with close code 1013; the IDE
// receives every notification.
func TestStalledWebSocketHostIsDropped(t *testing.T) {
	const chunk = 16 << 10
	const count = 50 << 20 / chunk
	var script strings.Builder
	script.WriteString(permScriptHead)
	script.WriteString("recv\n") // wait for the go signal
	for range count {
		fmt.Fprintf(&script, "big %d\n", chunk)
	}
	script.WriteString("waiteof\n")
	dropped := &logWatch{want: "host dropped", and: ErrHostTooSlowText, seen: make(chan struct{})}
	f := newBrokerFixture(t, script.String(), time.Minute, true, dropped)
	h, _, err := f.dial(f.authHeader())
	if err != nil {
		t.Fatal(err)
	}
	h.send(`{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"s1","historyPolicy":"none"}}`)
	h.next()
	f.ide.send(`{"jsonrpc":"2.0","method":"_test/go","params":{}}`)
	got := 0
	ideDone := make(chan struct{})
	go func() { // the IDE keeps reading while the stalled host is checked
		defer close(ideDone)
		for got < count {
			if m := f.ide.next(); m["method"] == "session/update" {
				got++
			}
		}
	}()
	// The stalled host's queue (256 messages of 16 KiB) and socket buffers
	// overflow long before the flood ends, and it is dropped. Reading as
	// soon as the bridge says so lets the close frame through (the bridge
	// waits 5 s for a peer to read it): it must say 1013.
	select {
	case <-dropped.seen:
	case <-ideDone:
		t.Fatal("the IDE got the whole flood and the stalled host was never dropped")
	}

	h.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var closeErr *websocket.CloseError
	for {
		_, _, err := h.c.ReadMessage()
		if err == nil {
			continue
		}
		if ce, ok := err.(*websocket.CloseError); ok {
			closeErr = ce
		}
		break
	}
	if closeErr == nil || closeErr.Code != 1013 {
		t.Errorf("stalled host closed with %v, want code 1013", closeErr)
	}
	<-ideDone // the IDE still receives everything
}

// ErrHostTooSlowText is how the log shows a host dropped for not reading.
var ErrHostTooSlowText = bridge.ErrHostTooSlow.Error()

// logWatch is an io.Writer for a fixture's log: it closes seen at the
// first line that contains both want and and.
type logWatch struct {
	want, and string
	once      sync.Once
	seen      chan struct{}
}

func (w *logWatch) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.want)) && bytes.Contains(p, []byte(w.and)) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

// TestWebSocketConnectCycles: 1,000 connect/initialize/disconnect cycles
// leave no goroutines and no file descriptors behind.
func TestWebSocketConnectCycles(t *testing.T) {
	f := newBrokerFixture(t, permScriptHead+"waiteof\n", time.Minute, true)
	cycle := func() {
		h, _, err := f.dial(f.authHeader())
		if err != nil {
			t.Fatal(err)
		}
		h.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		h.next()
		h.c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
		h.c.Close()
	}
	for range 20 {
		cycle()
	}
	settle := func() (int, int) {
		var g, fds int
		for range 50 {
			time.Sleep(20 * time.Millisecond)
			g = runtime.NumGoroutine()
			ents, _ := os.ReadDir("/proc/self/fd")
			fds = len(ents)
		}
		return g, fds
	}
	g0, fd0 := settle()
	n := 1000
	if testing.Short() {
		n = 100
	}
	for range n {
		cycle()
	}
	g1, fd1 := settle()
	t.Logf("%d cycles: goroutines %d -> %d, fds %d -> %d", n, g0, g1, fd0, fd1)
	if g1 > g0+5 || fd1 > fd0+5 {
		t.Errorf("leak after %d cycles: goroutines %d -> %d, fds %d -> %d", n, g0, g1, fd0, fd1)
	}
}
