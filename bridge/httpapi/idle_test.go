package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// At the cap, the keep-alive connection idle the longest is closed to make
// room for a new one, even though it showed the token: idle connections of
// any token cannot starve --max-connections. A busy one (a request in
// progress) is not closed, and the others keep working.
func TestIdleKeepAliveConnectionIsClosedToMakeRoom(t *testing.T) {
	setMinIdleToClose(t, 0)
	active := make(chan struct{}, 16)
	idle := make(chan string, 16) // the remote address of a connection the server saw go idle
	addr := serveLimitedWatched(t, 4, func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateActive:
			active <- struct{}{}
		case http.StateIdle:
			idle <- c.RemoteAddr().String()
		}
	})
	req := strings.Replace(capsReq, "ADDR", addr, 1)
	busy := dial(t, addr) // the oldest: busy, never closed to make room
	busyPost(t, busy, addr, active)
	var conns []net.Conn
	var bufs []*bufio.Reader
	for range 3 {
		c := dial(t, addr)
		br := bufio.NewReader(c)
		if resp := roundTrip(t, c, br, req); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		waitIdle(t, idle, c)
		conns, bufs = append(conns, c), append(bufs, br)
	}
	c := dial(t, addr)
	if resp := roundTrip(t, c, bufio.NewReader(c), req); resp.StatusCode != http.StatusOK {
		t.Fatalf("a new connection at the cap of idle ones: status %d, want 200", resp.StatusCode)
	}
	if !closedByServer(conns[0], bufs[0]) {
		t.Error("the connection idle the longest was not closed to make room")
	}
	if resp := roundTrip(t, conns[1], bufs[1], req); resp.StatusCode != http.StatusOK {
		t.Errorf("another idle connection: status %d, want 200", resp.StatusCode)
	}
	if resp := finishBusyPost(t, busy); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the busy connection: status %d, want 404", resp.StatusCode)
	}
}

// A client that sends its requests one after another on a keep-alive
// connection is not cut off between two of them: a connection idle for
// less than minIdleToClose is not closed to make room; the new connection
// is refused instead, and the idle one keeps working.
func TestBrieflyIdleConnectionIsNotClosedToMakeRoom(t *testing.T) {
	setMinIdleToClose(t, time.Hour)
	idle := make(chan string, 16)
	addr := serveLimitedWatched(t, 2, func(c net.Conn, st http.ConnState) {
		if st == http.StateIdle {
			idle <- c.RemoteAddr().String()
		}
	})
	req := strings.Replace(capsReq, "ADDR", addr, 1)
	var conns []net.Conn
	var bufs []*bufio.Reader
	for range 2 {
		c := dial(t, addr)
		br := bufio.NewReader(c)
		if resp := roundTrip(t, c, br, req); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		waitIdle(t, idle, c)
		conns, bufs = append(conns, c), append(bufs, br)
	}
	c := dial(t, addr)
	if !closedByServer(c, bufio.NewReader(c)) {
		t.Error("the new connection was not refused at a cap of briefly idle connections")
	}
	for i := range conns {
		if resp := roundTrip(t, conns[i], bufs[i], req); resp.StatusCode != http.StatusOK {
			t.Errorf("briefly idle connection %d: status %d, want 200", i, resp.StatusCode)
		}
	}
}

// setMinIdleToClose sets minIdleToClose for the test.
func setMinIdleToClose(t *testing.T, d time.Duration) {
	old := minIdleToClose
	minIdleToClose = d
	t.Cleanup(func() { minIdleToClose = old })
}

// waitIdle waits until the server has seen c go idle after a request.
func waitIdle(t *testing.T, idle <-chan string, c net.Conn) {
	t.Helper()
	timeout := time.After(hangGuard)
	for {
		select {
		case a := <-idle:
			if a == c.LocalAddr().String() {
				return
			}
		case <-timeout:
			t.Fatal("the server never saw the connection go idle")
		}
	}
}
