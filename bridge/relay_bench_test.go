package bridge

import (
	"fmt"
	"io"
	"testing"
)

// discardConn is a Conn that drops what it is sent and never reads.
type discardConn struct{ done chan struct{} }

func (c discardConn) ReadMessage() ([]byte, error) { <-c.done; return nil, io.EOF }
func (c discardConn) WriteMessages([][]byte) error { return nil }
func (c discardConn) Close() error                 { return nil }

// BenchmarkAgentNotification measures the bridge's per-message cost for a
// typical agent_message_chunk: envelope parse, session lookup, replay
// coalescing and queueing to one host (ns/op is per notification).
func BenchmarkAgentNotification(b *testing.B) {
	br := New(&Agent{exited: make(chan struct{})}, Options{})
	conn := discardConn{done: make(chan struct{})}
	h := NewHost("bench", conn, HostOptions{Blocking: true})
	br.mu.Lock()
	br.primary = h
	br.hosts = []*Host{h}
	br.addSessionLocked("bench", "/tmp", h)
	br.mu.Unlock()
	go h.writeLoop()
	defer func() { h.disconnect(errBridgeClosed); close(conn.done) }()
	msgs := make([][]byte, 1024)
	for i := range msgs {
		msgs[i] = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"token %d of the flood, some words to make it a typical chunk"}}}}`, i))
	}
	b.SetBytes(int64(len(msgs[0])))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		br.fromAgent(msgs[i%len(msgs)])
	}
}
