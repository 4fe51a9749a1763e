package bridge

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// BenchmarkAgentFlood measures the relay's hot path end to end for the
// flood of bench/floodagent: the agent's stdout read in blocks, each line
// parsed, routed, kept in the replay log and written by the host's writer
// over NDJSON (to io.Discard). ns/op and allocs/op are per notification.
func BenchmarkAgentFlood(b *testing.B) {
	const n = 20000
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"token %d of the flood, some words to make it a typical chunk of an answer streamed by a model"}}}}`+"\n", i)
	}
	flood := in.Bytes()
	b.SetBytes(int64(len(flood)))
	b.ReportAllocs()
	var br *Bridge
	var h *Host
	start := func() {
		agent := &Agent{exited: make(chan struct{})}
		agent.conn = newRecyclingConn(bytes.NewReader(flood), io.Discard, nil, 0)
		br = New(agent, Options{})
		h = NewHost("bench", NewNDJSONConn(eofReader{}, io.Discard, nil, 0), HostOptions{Blocking: true})
		br.mu.Lock()
		br.primary = h
		br.hosts = []*Host{h}
		br.addSessionLocked("bench", "/tmp", h)
		br.mu.Unlock()
		go h.writeLoop()
	}
	for b.Loop() {
		b.StopTimer()
		start()
		b.StartTimer()
		br.readAgent()
		h.finish()
		<-h.wdone
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/notification")
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
