//go:build linux

package bridge

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// oddAgentOutput is mixedAgentOutput plus lines longer than a block,
// lines with odd session ids (a number, none, twice, under an escaped
// member name), another sessionUpdate, and a final line without newline.
func oddAgentOutput(seed uint64, n int) []byte {
	base := mixedAgentOutput(seed, n)
	lines := bytes.SplitAfter(base, []byte("\n"))
	r := rand.New(rand.NewPCG(seed, 7))
	var out bytes.Buffer
	for i, l := range lines {
		out.Write(l)
		switch r.IntN(200) {
		case 0:
			out.WriteString(chunkUpdate(fmt.Sprintf("long %d %s", i, strings.Repeat("L", blockBytes+r.IntN(blockBytes)))) + "\n")
		case 1:
			out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":1,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"num"}}}}` + "\n")
		case 2:
			out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"nosid"}}}}` + "\n")
		case 3:
			out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"plan","entries":[]}}}` + "\n")
		case 4:
			out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"dup"}}}}` + "\n")
		case 5:
			out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"session\u0049d":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"escname"}}}}` + "\n")
		}
	}
	out.WriteString(chunkUpdate("final without newline"))
	return out.Bytes()
}

// relayPipes is relayOnce with the agent's stdout a real pipe written in
// random pieces (fillNow, readNow, waits mid-line), and the IDE a host over
// a small pipe read slowly (inline writes, partial writes, carries).
func relayPipes(t *testing.T, input []byte, replay int, lineByLine bool, seed uint64) relayed {
	t.Helper()
	agent, aw := pipeAgent(t)
	ideR, ideW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := ideW.SyscallConn()
	sc.Control(func(fd uintptr) { syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, 4096) })
	var ideOut bytes.Buffer
	ideDone := make(chan struct{})
	go func() {
		defer close(ideDone)
		r := rand.New(rand.NewPCG(seed, 3))
		buf := make([]byte, 1<<16)
		for {
			if r.IntN(50) == 0 {
				time.Sleep(time.Millisecond)
			}
			n, err := ideR.Read(buf[:1+r.IntN(len(buf)-1)])
			ideOut.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	ideConn := NewNDJSONConn(eofReader{}, ideW, nil, 0)
	b, nd, ws := relayBridge(agent, replay, lineByLine, ideConn)
	go func() {
		r := rand.New(rand.NewPCG(seed, 5))
		p := input
		for len(p) > 0 {
			k := min(len(p), 1+r.IntN(100000))
			aw.Write(p[:k])
			p = p[k:]
			if r.IntN(20) == 0 {
				time.Sleep(200 * time.Microsecond)
			}
		}
		aw.Close()
	}()
	b.readAgent()
	finishHosts(b)
	ideConn.Close() // the IDE's reader ends
	ideW.Close()
	<-ideDone
	ideR.Close()
	return relayedOf(b, ideOut.String(), nd, ws)
}

// TestRunsOverPipesRouteAsLineByLine is TestRunsRouteAsLineByLine with
// real pipes: the agent's stdout written in random pieces of up to 100 KB
// with pauses (reads that do not wait, waits in the middle of a line), the
// IDE behind a 4 KiB pipe read slowly in random pieces (inline writes,
// partial writes, carries), and lines longer than a block.
func TestRunsOverPipesRouteAsLineByLine(t *testing.T) {
	for _, replay := range []int{0, -1} {
		for seed := range uint64(3) {
			input := oddAgentOutput(seed, 12000)
			want := relayPipes(t, input, replay, true, seed)
			got := relayPipes(t, input, replay, false, seed)
			at := fmt.Sprintf("replay %d, seed %d", replay, seed)
			t.Logf("%s: runs %d, ide %d bytes, nd %d, ws %d msgs", at, got.runs, len(got.ide), len(got.nd), len(got.ws))
			if got.runs == 0 {
				t.Errorf("%s: no runs", at)
			}
			compareRelayed(t, at, got, want)
		}
	}
}

// chanConn is a host conn that reads what the test puts in in and keeps
// what it is written, sleeping delay on each write (a WebSocket host);
// wrote is closed at its first write.
type chanConn struct {
	in        chan []byte
	mu        sync.Mutex
	msgs      []string
	delay     time.Duration
	once      sync.Once
	done      chan struct{}
	wroteOnce sync.Once
	wrote     chan struct{}
}

func (c *chanConn) ReadMessage() ([]byte, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	}
}
func (c *chanConn) WriteMessages(msgs [][]byte) error {
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		c.msgs = append(c.msgs, string(m))
	}
	c.wroteOnce.Do(func() { close(c.wrote) })
	return nil
}
func (c *chanConn) Close() error { c.once.Do(func() { close(c.done) }); return nil }

// TestAttachersDuringAFloodGetEachLineOnce: 40 hosts attach to s1
// (historyPolicy full) while the agent floods it, mostly with plain chunks
// (runs) kept byte for byte by the replay log, some hosts too slow for
// their queue and dropped: each gets its replay and then the live lines,
// a prefix of s1's lines (all of them when it stayed), each exactly once
// and in order, and the IDE gets all of s1's lines.
func TestAttachersDuringAFloodGetEachLineOnce(t *testing.T) {
	for seed := range uint64(3) {
		r := rand.New(rand.NewPCG(seed, 9))
		var s1 []string
		var input bytes.Buffer
		for i := range 20000 {
			var l string
			switch k := r.IntN(100); {
			case k < 90:
				// plain (no member but sessionUpdate, content, messageId in update), kept raw by the replay log
				l = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d %s","annotations":{"n":%d}}}}}`, i, strings.Repeat("x", r.IntN(300)), i)
				s1 = append(s1, l)
			case k < 95:
				l = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%d","annotations":{}}}}}`, i)
			case k < 97:
				l = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c%d","title":"t"}}}`, i)
				s1 = append(s1, l)
			case k < 98:
				l = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\u0031","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"esc %d","annotations":{}}}}}`, i)
				s1 = append(s1, l)
			default:
				l = "garbage"
			}
			input.WriteString(l + "\n")
		}
		agent, aw := pipeAgent(t)
		b := New(agent, Options{Logger: slog.New(slog.DiscardHandler), ReplayMaxBytes: 1 << 30})
		ideR, ideW, _ := os.Pipe()
		ideIn, ideInW, _ := os.Pipe()
		ide := NewHost("ide", NewNDJSONConn(ideIn, ideW, ideIn, 0), HostOptions{Blocking: true})
		other := NewHost("other", &chanConn{in: make(chan []byte), done: make(chan struct{}), wrote: make(chan struct{})}, HostOptions{Blocking: true})
		b.AddHost(ide)
		b.AddHost(other)
		b.mu.Lock()
		b.addSessionLocked("s1", "/tmp", ide)
		b.addSessionLocked("s2", "/tmp", other)
		b.mu.Unlock()
		var ideOut bytes.Buffer
		ideDone := make(chan struct{})
		go func() {
			defer close(ideDone)
			ir := rand.New(rand.NewPCG(seed, 13))
			buf := make([]byte, 8192)
			for {
				if ir.IntN(100) == 0 {
					time.Sleep(time.Millisecond)
				}
				n, err := ideR.Read(buf)
				ideOut.Write(buf[:n])
				if err != nil {
					return
				}
			}
		}()
		rdone := make(chan struct{})
		go func() { defer close(rdone); b.readAgent() }()
		go func() {
			p := input.Bytes()
			wr := rand.New(rand.NewPCG(seed, 11))
			for len(p) > 0 {
				k := min(len(p), 1+wr.IntN(300000))
				aw.Write(p[:k])
				p = p[k:]
				if wr.IntN(4) == 0 {
					time.Sleep(time.Duration(wr.IntN(2000)) * time.Microsecond)
				}
			}
			aw.Close()
		}()
		type att struct {
			h *Host
			c *chanConn
		}
		var atts []att
		for i := 0; ; i++ {
			select {
			case <-rdone:
			default:
				if i >= 40 {
					<-rdone
					break
				}
				c := &chanConn{in: make(chan []byte, 1), done: make(chan struct{}), wrote: make(chan struct{}), delay: time.Duration(r.IntN(300)) * time.Microsecond}
				h := NewHost(fmt.Sprintf("att%d", i), c, HostOptions{QueueLen: 100 + r.IntN(20000)})
				b.AddHost(h)
				c.in <- []byte(`{"jsonrpc":"2.0","id":"att","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"full"}}`)
				atts = append(atts, att{h, c})
				time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond) // attach along the flood
				continue
			}
			break
		}
		for _, a := range atts {
			select { // its session/attach was answered (or it was dropped first)
			case <-a.c.wrote:
			case <-a.h.gone:
			}
		}
		b.mu.Lock()
		hosts := b.hosts
		b.mu.Unlock()
		for _, h := range hosts {
			h.finish()
		}
		for _, h := range hosts {
			<-h.wdone
		}
		ideW.Close()
		ideInW.Close()
		<-ideDone
		want := strings.Join(s1, "\n") + "\n"
		if got := ideOut.String(); got != want {
			t.Errorf("seed %d: ide: %s", seed, firstDiff(got, want))
		}
		dropped, full := 0, 0
		for _, a := range atts {
			a.c.mu.Lock()
			msgs := a.c.msgs
			a.c.mu.Unlock()
			if len(msgs) == 0 || !strings.Contains(msgs[0], `"id":"att"`) {
				t.Errorf("seed %d: %s: first message %.80q", seed, a.h.ID, msgs)
				continue
			}
			msgs = msgs[1:]
			if a.h.Err() != nil {
				dropped++
			} else if len(msgs) == len(s1) {
				full++
			}
			if len(msgs) > len(s1) {
				t.Errorf("seed %d: %s got %d lines, more than %d", seed, a.h.ID, len(msgs), len(s1))
				continue
			}
			if d := sliceDiff(msgs, s1[:len(msgs)]); d != "" {
				t.Errorf("seed %d: %s (err %v): %s", seed, a.h.ID, a.h.Err(), d)
			}
			if a.h.Err() == nil && len(msgs) != len(s1) {
				t.Errorf("seed %d: %s connected but got %d of %d lines", seed, a.h.ID, len(msgs), len(s1))
			}
		}
		t.Logf("seed %d: %d attachers, %d dropped, %d got everything, runs %d", seed, len(atts), dropped, full, b.runs)
		for _, h := range hosts {
			h.disconnect(errBridgeClosed) // their readers end
		}
		b.hostWG.Wait()
	}
}
