package httpapi

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"

	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// serveLimited serves the API on a loopback LimitListener of max
// connections and returns its address.
func serveLimited(t *testing.T, max int) string {
	t.Helper()
	return serveLimitedWatched(t, max, nil)
}

// serveLimitedWatched is serveLimited with watch called after each state
// change of a connection (http.Server ConnState), when not nil.
func serveLimitedWatched(t *testing.T, max int, watch func(net.Conn, http.ConnState)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := confirm.NewBroker(confirm.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := NewServer(New(b, Options{Addr: ln.Addr().String(), Token: testToken, Logger: log}), log)
	if watch != nil {
		srv.ConnState = func(c net.Conn, st http.ConnState) { connState(c, st); watch(c, st) }
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(LimitListener(ln, max, log)) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// hangGuard is how long a test waits for an answer it expects at once
// before it calls the server stuck; it is not a speed requirement.
const hangGuard = 10 * time.Second

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes req on c and reads one response.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, req string) *http.Response {
	t.Helper()
	c.SetDeadline(time.Now().Add(hangGuard))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// closedByServer reports whether the server closed c (rather than leaving it
// open until the hang guard).
func closedByServer(c net.Conn, br *bufio.Reader) bool {
	c.SetReadDeadline(time.Now().Add(hangGuard))
	_, err := br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// A request with a wrong token gets its 401 while its body is still to
// come, and the server then closes the connection instead of reading the
// body to keep it alive.
func TestRequestWithoutTokenIsRefusedBeforeItsBodyIsRead(t *testing.T) {
	addr := serveLimited(t, 8)
	c := dial(t, addr)
	br := bufio.NewReader(c)
	resp := roundTrip(t, c, br, "POST /v1/sessions/s/decisions/d HTTP/1.1\r\nHost: "+addr+
		"\r\nAuthorization: Bearer 1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	if !closedByServer(c, br) {
		t.Error("the connection stayed open after the 401")
	}
}

// Only the answer route takes a body; every other route refuses one with
// 413 before its handler runs.
func TestRouteWithoutBodyRefusesABody(t *testing.T) {
	h := testHandler(t)
	for _, body := range []io.Reader{strings.NewReader(`{}`), io.MultiReader(strings.NewReader(`{}`))} {
		r := httptest.NewRequest("GET", "/v1/sessions", body)
		r.Host = testAddr
		r.Header.Set("Authorization", "Bearer "+testToken)
		r.Header.Set("Content-Type", "application/json")
		if _, ok := body.(*strings.Reader); !ok {
			r.ContentLength = -1 // chunked
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("GET /v1/sessions with a body (length %d): %d, want 413", r.ContentLength, w.Code)
		}
	}
}

const capsReq = "GET /v1/capabilities HTTP/1.1\r\nHost: ADDR\r\nAuthorization: Bearer " + testToken + "\r\n\r\n"

// At the cap with every connection authenticated and busy (here: a request
// whose body is still coming), a new connection is accepted and closed at
// once; the open ones keep working.
func TestConnectionBeyondCapIsClosedAtOnce(t *testing.T) {
	active := make(chan struct{}, 8)
	addr := serveLimitedWatched(t, 2, func(_ net.Conn, st http.ConnState) {
		if st == http.StateActive {
			active <- struct{}{}
		}
	})
	var keep []net.Conn
	for range 2 {
		c := dial(t, addr)
		busyPost(t, c, addr, active)
		keep = append(keep, c)
	}
	c := dial(t, addr)
	if !closedByServer(c, bufio.NewReader(c)) {
		t.Fatal("a connection beyond the cap was left open")
	}
	for _, c := range keep {
		if resp := finishBusyPost(t, c); resp.StatusCode != http.StatusNotFound {
			t.Errorf("a busy authenticated connection after the refusal: status %d, want 404", resp.StatusCode)
		}
	}
}

// busyPost makes c an authenticated connection with a request in
// progress: one request with the token, then the start of an answer whose
// body is still to come, until the server has read its headers (active
// receives http.StateActive from the server's ConnState). finishBusyPost
// sends the rest.
func busyPost(t *testing.T, c net.Conn, addr string, active <-chan struct{}) {
	t.Helper()
	if resp := roundTrip(t, c, bufio.NewReader(c), strings.Replace(capsReq, "ADDR", addr, 1)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	<-active // the first request
	io.WriteString(c, "POST /v1/sessions/s/decisions/d HTTP/1.1\r\nHost: "+addr+"\r\nAuthorization: Bearer "+testToken+
		"\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"optionId\":")
	select {
	case <-active:
	case <-time.After(hangGuard):
		t.Fatal("the server never read the headers of the answer")
	}
}

// finishBusyPost sends the rest of busyPost's body and reads the response
// (404: no such decision).
func finishBusyPost(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	return roundTrip(t, c, bufio.NewReader(c), `"allow"}`)
}

// At the cap, a connection that never showed the token is closed to make
// room for a new one, so idle or slow clients cannot lock out the user.
func TestConnectionWithoutTokenIsClosedToMakeRoom(t *testing.T) {
	addr := serveLimited(t, 2)
	idle := []net.Conn{dial(t, addr), dial(t, addr)}
	io.WriteString(idle[1], "GET /v1/capabilities HTTP/1.1\r\nHost: ") // headers never finish
	c := dial(t, addr)
	br := bufio.NewReader(c)
	if resp := roundTrip(t, c, br, strings.Replace(capsReq, "ADDR", addr, 1)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if !closedByServer(idle[0], bufio.NewReader(idle[0])) {
		t.Error("the oldest connection without a token was not closed")
	}
}
