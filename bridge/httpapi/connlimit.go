package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConnections is the default of --max-connections: far more than
// one person's browser tabs, scripts and WebSocket hosts need, far fewer than
// the file descriptors of a process.
const DefaultMaxConnections = 128

// LimitListener returns ln with at most max connections open at once
// (max < 1 means DefaultMaxConnections), counting WebSocket connections
// after their upgrade. A connection counts as unauthenticated until the
// guard has seen the bearer token on one of its requests (this needs the
// ConnContext of [NewServer]). A connection is idle while it is a
// keep-alive connection between requests (this needs the ConnState of
// [NewServer]; any byte of a new request ends it). When a new connection
// arrives at the cap, the oldest unauthenticated connection is closed to
// make room, or else the one idle the longest if it has been idle for at
// least a second, so a flood of slow or idle
// clients without the token never locks out one that has it, and idle
// keep-alive connections, whatever their token, never starve the cap, while
// a client that sends requests one after another on its connection is not
// cut off between two of them; when every open connection is authenticated
// and busy (a request in progress, an event stream, a WebSocket host) or
// idle for less than a second, the new one is accepted and closed at
// once rather than queued. Unlike netutil.LimitListener it
// never blocks Accept. log receives one line when the cap is first reached.
// See docs/security.md, "Limits".
func LimitListener(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max < 1 {
		max = DefaultMaxConnections
	}
	if log == nil {
		log = slog.Default()
	}
	return &limitListener{Listener: ln, max: max, log: log}
}

type limitListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu      sync.Mutex   // guards open, unauth, idle, warned, streams
	open    int          // tracked connections
	unauth  []*limitConn // tracked unauthenticated connections, oldest first
	idle    []*limitConn // tracked authenticated idle connections, idle the longest first
	warned  bool         // the cap was logged
	streams int          // open GET /v1/events streams ([Events])
}

// minIdleToClose is how long an authenticated keep-alive connection must
// have been idle before it may be closed to make room at the cap (a
// second; tests change it): a client's next request on it usually follows
// sooner, and closing a connection while a request is on its way to it
// fails that request.
var minIdleToClose = time.Second

// acquireStream counts a new event stream, or says why there is no room:
// streams take at most half of the connections, so that the others stay
// free for the requests of the API, the page and the WebSocket hosts.
func (l *limitListener) acquireStream() (release func(), refused string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if limit := l.max / 2; l.streams >= limit {
		return nil, fmt.Sprintf("%d event streams are open, the most there may be (half of --max-connections %d); close one first", l.streams, l.max)
	}
	l.streams++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.streams--
			l.mu.Unlock()
		})
	}, ""
}

// Accept returns the next connection, closing the oldest unauthenticated
// one when the cap is reached, else the one idle the longest (for a second
// at least), or closing the new one when every open connection is
// authenticated and busy or idle for less. Errors are those of the
// wrapped listener.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitConn{Conn: c, l: l}
		victim, ok := l.admit(lc)
		if victim != nil {
			victim.Conn.Close()
		}
		if ok {
			return lc, nil
		}
		c.Close()
	}
}

// admit tracks lc if there is room, making room by untracking the oldest
// unauthenticated connection, or else the one idle the longest, which the
// caller closes.
func (l *limitListener) admit(lc *limitConn) (victim *limitConn, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.max {
		if !l.warned {
			l.warned = true
			l.log.Warn("httpapi: connection cap reached; closing the oldest connection without a token or the longest idle one, or refusing new ones", "max_connections", l.max)
		}
		switch {
		case len(l.unauth) > 0:
			victim = l.unauth[0]
		case len(l.idle) > 0 && time.Since(l.idle[0].idleSince) >= minIdleToClose:
			victim = l.idle[0]
		default:
			return nil, false
		}
		l.untrackLocked(victim)
	}
	l.open++
	lc.tracked = true
	l.unauth = append(l.unauth, lc)
	return victim, true
}

// untrackLocked forgets c; l.mu is held.
func (l *limitListener) untrackLocked(c *limitConn) {
	if !c.tracked {
		return
	}
	c.tracked = false
	l.open--
	if !c.auth {
		l.unauth = remove(l.unauth, c)
	}
	if c.idle.Load() {
		c.idle.Store(false)
		l.idle = remove(l.idle, c)
	}
}

// remove returns list without c.
func remove(list []*limitConn, c *limitConn) []*limitConn {
	for i, u := range list {
		if u == c {
			return append(list[:i], list[i+1:]...)
		}
	}
	return list
}

// limitConn is one tracked connection; its fields are guarded by l.mu,
// except that idle is also read without it.
type limitConn struct {
	net.Conn
	l         *limitListener
	tracked   bool        // counted in l.open
	auth      bool        // the guard saw the token on this connection
	idle      atomic.Bool // in l.idle: authenticated, between requests
	idleSince time.Time   // when idle last became true
	once      sync.Once
}

// Read reads from the connection; the first byte of a new request ends
// its idle time, so it is not closed to make room while it is being read.
func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.idle.Load() {
		c.setIdle(false)
	}
	return n, err
}

// setIdle records whether c is a keep-alive connection between requests.
// Only an authenticated connection is listed as idle: an unauthenticated
// one is closed first anyway.
func (c *limitConn) setIdle(idle bool) {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.tracked || !c.auth || c.idle.Load() == idle {
		return
	}
	c.idle.Store(idle)
	if idle {
		c.idleSince = time.Now()
		l.idle = append(l.idle, c)
	} else {
		l.idle = remove(l.idle, c)
	}
}

// Close closes the connection and frees its place.
func (c *limitConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.untrackLocked(c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// authenticate marks c as carrying the token: it is no longer closed to
// make room for new connections.
func (c *limitConn) authenticate() {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.auth || !c.tracked {
		c.auth = true
		return
	}
	l.unauth = remove(l.unauth, c)
	c.auth = true
}

type connKey struct{}

// connContext is the http.Server ConnContext that lets the guard find the
// connection of a request.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connState is the http.Server ConnState that tells a [LimitListener]
// which connections are idle keep-alive connections between requests.
func connState(c net.Conn, st http.ConnState) {
	if lc, ok := c.(*limitConn); ok {
		lc.setIdle(st == http.StateIdle)
	}
}

// markAuthenticated tells the connection limiter that the connection of r
// carried the token.
func markAuthenticated(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*limitConn); ok {
		c.authenticate()
	}
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one whose request body it did not read.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
