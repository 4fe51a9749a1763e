package bridge

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// messageConn is a Conn that writes one message at a time and keeps each,
// as a WebSocket host does (not NDJSON: its batches never join lines).
type messageConn struct {
	mu   sync.Mutex
	msgs []string
}

func (c *messageConn) ReadMessage() ([]byte, error) { return nil, io.EOF }
func (c *messageConn) WriteMessages(msgs [][]byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		c.msgs = append(c.msgs, string(m))
	}
	return nil
}
func (c *messageConn) Close() error { return nil }

// mixedAgentOutput is n lines of what an agent may write, drawn with
// seed: mostly plain chunks of sessions s1, s2 and s3 (unknown to the
// bridge), s1 also with an escaped id, and among them the lines a run must
// not take: tool calls, mode updates, _meta, other methods, requests and
// responses, CRLF endings, empty lines, non-JSON and invalid UTF-8.
func mixedAgentOutput(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var out bytes.Buffer
	chunk := func(sid, text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid + `,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`
	}
	sids := []string{`"s1"`, `"s2"`, `"s3"`, `"s\u0031"`}
	for i := range n {
		text := fmt.Sprintf("line %d %s", i, strings.Repeat("x", r.IntN(400)))
		sid := sids[0]
		if r.IntN(8) == 0 {
			sid = sids[r.IntN(len(sids))]
		}
		var l string
		switch k := r.IntN(100); {
		case k < 85:
			l = chunk(sid, text)
		case k < 87:
			l = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid + `,"update":{"sessionUpdate":"tool_call","toolCallId":"c` + fmt.Sprint(i) + `","title":"t"}}}`
		case k < 88:
			l = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid + `,"update":{"sessionUpdate":"current_mode_update","currentModeId":"m"}}}`
		case k < 90:
			l = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid + `,"_meta":{"acpmux":{"x":1},"v":2},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`
		case k < 91:
			l = `{"jsonrpc":"2.0","method":"_vendor/note","params":{"n":` + fmt.Sprint(i) + `}}`
		case k < 92:
			l = `{"jsonrpc":"2.0","id":` + fmt.Sprint(i) + `,"result":{}}`
		case k < 94:
			l = chunk(sid, text) + "\r"
		case k < 95:
			l = ""
		case k < 96:
			l = "not json " + text
		case k < 97:
			l = chunk(sid, text+"\xff")
		case k < 98:
			l = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + sid + `,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}` // unbalanced
		default:
			l = `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"no session"}},"sessionId":` + sid + `}}`
		}
		out.WriteString(l + "\n")
	}
	return out.Bytes()
}

// relayed is what the hosts of relayOnce got and what the sessions' replay
// logs kept.
type relayed struct {
	ide, nd string   // what the NDJSON hosts got
	ws      []string // the messages of the host that writes one at a time
	replay  []string // the replay logs of s1 and s2, message by message
	runs    int      // runs the reader routed
}

// relayBridge returns a bridge of agent with the given replay budget and
// three hosts: the IDE (ideConn, session s1), an NDJSON host of session
// s2 writing to nd, and a host that writes one message at a time (ws) in
// both. lineByLine sets a Watch, so the reader routes every line by
// itself, never in runs. The hosts' writers are started.
func relayBridge(agent *Agent, replay int, lineByLine bool, ideConn Conn) (b *Bridge, nd *bytes.Buffer, ws *messageConn) {
	opts := Options{ReplayMaxBytes: replay, Logger: slog.New(slog.DiscardHandler)}
	if lineByLine {
		opts.Watch = func(string, []byte) {}
	}
	b = New(agent, opts)
	nd, ws = &bytes.Buffer{}, &messageConn{}
	ideH := NewHost("ide", ideConn, HostOptions{Blocking: true})
	ndH := NewHost("nd", NewNDJSONConn(eofReader{}, nd, nil, 0), HostOptions{Blocking: true})
	wsH := NewHost("ws", ws, HostOptions{Blocking: true})
	b.mu.Lock()
	b.primary = ideH
	b.hosts = []*Host{ideH, ndH, wsH}
	b.addSessionLocked("s1", "/tmp", ideH)
	b.sessions["s1"].addHost(wsH)
	b.addSessionLocked("s2", "/tmp", ndH)
	b.sessions["s2"].addHost(wsH)
	b.mu.Unlock()
	for _, h := range b.hosts {
		go h.writeLoop()
	}
	return b, nd, ws
}

// finishHosts lets every host of b write what is queued and waits for
// its writer.
func finishHosts(b *Bridge) {
	for _, h := range b.hosts {
		h.finish()
	}
	for _, h := range b.hosts {
		<-h.wdone
	}
}

// relayedOf is what relayBridge's hosts got (ide: the IDE's output) and
// what the replay logs of s1 and s2 kept.
func relayedOf(b *Bridge, ide string, nd *bytes.Buffer, ws *messageConn) relayed {
	out := relayed{ide: ide, nd: nd.String(), ws: ws.msgs, runs: b.runs}
	for _, sid := range []string{"s1", "s2"} {
		for _, m := range b.sessions[sid].replay.messages() {
			out.replay = append(out.replay, string(m))
		}
	}
	return out
}

// relayOnce reads input as the agent's stdout through relayBridge, the
// IDE an NDJSON host writing to a buffer.
func relayOnce(t *testing.T, input []byte, replay int, lineByLine bool) relayed {
	t.Helper()
	agent := &Agent{exited: make(chan struct{})}
	agent.conn = newRecyclingConn(bytes.NewReader(input), io.Discard, nil, 0)
	var ideOut bytes.Buffer
	b, nd, ws := relayBridge(agent, replay, lineByLine, NewNDJSONConn(eofReader{}, &ideOut, nil, 0))
	b.readAgent()
	finishHosts(b)
	return relayedOf(b, ideOut.String(), nd, ws)
}

// compareRelayed reports where got differs from want, host by host and
// in the replay logs (at names the case).
func compareRelayed(t *testing.T, at string, got, want relayed) {
	t.Helper()
	if got.ide != want.ide {
		t.Errorf("%s: ide: got %d bytes, want %d: %s", at, len(got.ide), len(want.ide), firstDiff(got.ide, want.ide))
	}
	if got.nd != want.nd {
		t.Errorf("%s: nd: got %d bytes, want %d: %s", at, len(got.nd), len(want.nd), firstDiff(got.nd, want.nd))
	}
	if d := sliceDiff(got.ws, want.ws); d != "" {
		t.Errorf("%s: ws: %s", at, d)
	}
	if d := sliceDiff(got.replay, want.replay); d != "" {
		t.Errorf("%s: replay logs: %s", at, d)
	}
}

// TestRunsRouteAsLineByLine: the agent reader's runs of plain
// notifications (agentRun) give every host exactly what routing line by
// line gives: the same lines, in the same order, byte for byte, for
// NDJSON hosts (a run joined in one piece) and a host that writes one
// message at a time (a run split into its lines), and the sessions'
// replay logs keep the same messages, over thousands of lines across
// many blocks with every kind of line a run must stop at; with a replay
// log and without.
func TestRunsRouteAsLineByLine(t *testing.T) {
	for _, replay := range []int{0, -1} {
		for seed := range uint64(3) {
			input := mixedAgentOutput(seed, 12000)
			if len(input) < 4*blockBytes {
				t.Fatalf("the input is %d bytes, want several blocks", len(input))
			}
			want := relayOnce(t, input, replay, true)
			if want.runs != 0 {
				t.Fatalf("%d runs routing line by line, want none", want.runs)
			}
			got := relayOnce(t, input, replay, false)
			at := fmt.Sprintf("replay %d, seed %d", replay, seed)
			if plain := strings.Count(want.ide, `"agent_message_chunk"`); got.runs == 0 || got.runs*2 > plain {
				t.Errorf("%s: %d runs for %d plain lines: want runs of several lines", at, got.runs, plain)
			}
			compareRelayed(t, at, got, want)
			if len(want.ide) == 0 || len(want.nd) == 0 || len(want.ws) == 0 || (replay == 0) != (len(want.replay) > 0) {
				t.Errorf("%s: ide %d, nd %d bytes, ws %d messages, replay %d: want each host to get something, and a replay log only with a budget",
					at, len(want.ide), len(want.nd), len(want.ws), len(want.replay))
			}
		}
	}
}

// sliceDiff describes the first difference of got and want, "" if none.
func sliceDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("message %d: got %.100q, want %.100q", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("got %d messages, want %d", len(got), len(want))
	}
	return ""
}

// firstDiff describes where got and want first differ.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("first difference at byte %d: got %.80q, want %.80q", i, got[i:], want[i:])
}

// TestAFloodGoesInFewRuns: a flood of one session's chunks is routed in
// runs of up to maxPending lines, one more where a line spans two blocks,
// and reaches the IDE byte for byte.
func TestAFloodGoesInFewRuns(t *testing.T) {
	var in bytes.Buffer
	const n = 6000
	for i := range n {
		in.WriteString(chunkUpdate(fmt.Sprintf("chunk %d %s", i, strings.Repeat("y", i%200))) + "\n")
	}
	got := relayOnce(t, in.Bytes(), -1, false)
	if got.ide != in.String() {
		t.Fatalf("ide: %s", firstDiff(got.ide, in.String()))
	}
	runs := got.runs
	blocks := in.Len()/blockBytes + 1
	if most := n/maxPending + 2*blocks; runs > most {
		t.Errorf("%d lines in %d blocks went in %d runs, want at most %d", n, blocks, runs, most)
	}
}

// TestBatchesHoldAtMostMaxPending: the reader hands a host batches of at
// most maxPending messages, runs counted line by line, whatever the runs'
// lengths: a host's queue bounds count messages, and a blocking host
// takes any one batch into an empty queue (so a larger batch would pass
// the IDE's bound of 1024). Every line arrives, in order.
func TestBatchesHoldAtMostMaxPending(t *testing.T) {
	var in bytes.Buffer
	var want []string
	for i := range 20000 {
		l := chunkUpdate(fmt.Sprint("c ", i))
		in.WriteString(l + "\n")
		want = append(want, l)
		if i%1000 == 999 { // a run of 1000 lines, then a line that ends it
			l = `{"jsonrpc":"2.0","method":"_x/note","params":{}}`
			in.WriteString(l + "\n")
			want = append(want, l)
		}
	}
	for _, tc := range []struct {
		name string
		conn Conn
	}{{"ndjson", NewNDJSONConn(eofReader{}, io.Discard, nil, 0)}, {"one message at a time", &messageConn{}}} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &Agent{exited: make(chan struct{}), conn: newRecyclingConn(bytes.NewReader(in.Bytes()), io.Discard, nil, 0)}
			b := New(agent, Options{ReplayMaxBytes: -1})
			h := NewHost("ide", tc.conn, HostOptions{Blocking: true, QueueLen: 1 << 16}) // no writer: the queue keeps every batch
			b.mu.Lock()
			b.primary, b.hosts = h, []*Host{h}
			b.addSessionLocked("s1", "/tmp", h)
			b.mu.Unlock()
			b.readAgent()
			var got []string
			for len(h.queue) > 0 {
				hb := <-h.queue
				hb.count()
				if hb.n > maxPending {
					t.Errorf("a batch of %d messages, more than %d", hb.n, maxPending)
				}
				for _, m := range hb.msgs {
					got = append(got, strings.Split(string(m), "\n")...)
				}
				hb.release()
			}
			if d := sliceDiff(got, want); d != "" {
				t.Errorf("the host's queue: %s", d)
			}
		})
	}
}
