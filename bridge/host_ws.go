package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/coder/websocket"
)

// HeaderConnectionID is the response header of the WebSocket upgrade that
// names the connection (ACP RFD "Streamable HTTP & WebSocket transport").
const HeaderConnectionID = "Acp-Connection-Id"

// Close codes a WebSocket host may get (RFC 6455 §7.4).
const (
	// CloseTooSlow: the host did not read fast enough and its bounded
	// queue overflowed (1013 "try again later").
	CloseTooSlow = websocket.StatusTryAgainLater
	// CloseGoingAway: acpmux is stopping or the agent exited.
	CloseGoingAway = websocket.StatusGoingAway
)

var wsCount atomic.Int64

// ServeWebSocket is the http.Handler body of /acp: it upgrades the request
// (already authenticated by the caller) to a WebSocket, answers with an
// Acp-Connection-Id header, and runs an ACP host over it, one JSON-RPC
// message per text frame (binary frames are ignored), until either side
// closes. The host's queue holds queueLen messages; a host that falls
// behind is closed with CloseTooSlow while the agent and other hosts go on.
// It returns when the host is gone.
func (b *Bridge) ServeWebSocket(w http.ResponseWriter, r *http.Request, queueLen int) {
	var idb [8]byte
	rand.Read(idb[:])
	connID := hex.EncodeToString(idb[:])
	w.Header().Set(HeaderConnectionID, connID)
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{"acp"},
		// The caller checked Origin exactly (and Host, and the token)
		// before the upgrade; the library's own check would only repeat it.
		InsecureSkipVerify: true,
	})
	if err != nil {
		b.log.Debug("websocket upgrade failed", "err", err)
		return
	}
	c.SetReadLimit(int64(b.opts.MaxLineBytes))
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	conn := &wsConn{c: c, ctx: ctx}
	opts := HostOptions{QueueLen: queueLen, Kind: "websocket"}
	if p, ok := identity.PersonFrom(r.Context()); ok { // the guard's (docs/tokens.md)
		opts.Person = &p
	}
	h := NewHost(fmt.Sprintf("ws-%d", wsCount.Add(1)), conn, opts)
	if err := b.AddHost(h); err != nil {
		c.Close(CloseGoingAway, err.Error())
		return
	}
	b.log.Debug("websocket host connected", "host", h.ID, "connection", connID, "remote", r.RemoteAddr)
	<-h.Done()
	conn.wait()
	b.log.Debug("websocket host disconnected", "host", h.ID, "cause", h.Err())
}

// wsConn is a Conn over a WebSocket connection; its context lives as long
// as the connection (STYLE: the one exception to ctx in a struct).
type wsConn struct {
	c       *websocket.Conn
	ctx     context.Context
	closing sync.WaitGroup
	once    sync.Once
}

// ReadMessage returns the next text frame; binary frames are skipped. A
// close frame with status 1000 (normal) or 1001 (going away) is
// errHostClosed.
func (w *wsConn) ReadMessage() ([]byte, error) {
	for {
		typ, data, err := w.c.Read(w.ctx)
		if s := websocket.CloseStatus(err); s == websocket.StatusNormalClosure || s == websocket.StatusGoingAway {
			return nil, errHostClosed
		}
		if err != nil {
			return nil, err
		}
		if typ == websocket.MessageText {
			return data, nil
		}
	}
}

// WriteMessages writes each message as one text frame.
func (w *wsConn) WriteMessages(msgs [][]byte) error {
	for _, m := range msgs {
		if err := w.c.Write(w.ctx, websocket.MessageText, m); err != nil {
			return err
		}
	}
	return nil
}

// Close closes with CloseGoingAway.
func (w *wsConn) Close() error { return w.CloseWithCause(errBridgeClosed) }

// CloseWithCause starts the close handshake with a code and reason for
// cause and returns at once: the handshake may wait on a peer that does
// not read, and the caller may be the agent's read loop.
func (w *wsConn) CloseWithCause(cause error) error {
	w.once.Do(func() {
		code, reason := CloseGoingAway, "acpmux is closing the connection"
		if errors.Is(cause, ErrHostTooSlow) {
			code, reason = CloseTooSlow, ErrHostTooSlow.Error()
		}
		w.closing.Add(1)
		go func() {
			defer w.closing.Done()
			done := make(chan struct{})
			go func() { w.c.Close(code, reason); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				w.c.CloseNow() // the peer does not read: drop the TCP connection
				<-done
			}
		}()
	})
	return nil
}

// wait returns once a started close has finished.
func (w *wsConn) wait() { w.closing.Wait() }
