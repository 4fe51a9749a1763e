package bridge_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge"
)

// floodLines returns n session/update notifications of session sid, each
// different from the others and about 100 to 400 bytes, so that they fall
// at every offset of the reader's blocks: mostly agent_message_chunk (runs
// of 1,000 share a messageId and coalesce in the replay log), every 10th a
// tool_call_update (kept whole by the replay log), and one chunk longer
// than a block in the middle.
func floodLines(sid string, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		switch {
		case i == n/2:
			lines[i] = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"long %d %s"},"messageId":"m%d"}}}`, sid, i, strings.Repeat("L", bridge.BlockBytes+1000), i/1000)
		case i%10 == 7:
			lines[i] = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"tool_call_update","toolCallId":"t%d","status":"in_progress","content":[{"type":"content","content":{"type":"text","text":"output %d %s"}}]}}}`, sid, i, i, strings.Repeat("o", i%97))
		default:
			lines[i] = fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of %s: %s"},"messageId":"m%d"}}}`, sid, i, sid, strings.Repeat(string(rune('a'+i%26)), i%301), i/1000)
		}
	}
	return lines
}

// TestSlowHostGetsEveryByteWhileBlocksAreReused: the agent's lines are
// lent from blocks that go back to a pool once every host has written
// them. A host whose writer is stuck while a flood of one session is
// queued for it keeps those blocks: a second flood, of a session it is not
// in, reuses blocks only the fast host held, and the slow host, once it
// reads, gets every byte of the first flood as the agent wrote it, as the
// fast host got both. A host attaching afterwards gets the first flood
// from the replay log, which keeps copies. Run with -race.
func TestSlowHostGetsEveryByteWhileBlocksAreReused(t *testing.T) {
	const n = 15000
	first, second := floodLines("s1", n), floodLines("s2", n)
	var script strings.Builder
	script.WriteString(`recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s2"}}
`)
	for _, flood := range [][]string{first, second} {
		script.WriteString("recv session/prompt\n")
		for _, l := range flood {
			script.WriteString("send " + l + "\n")
		}
		script.WriteString(`send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}` + "\n")
	}
	script.WriteString("waiteof\n")
	b, add, _ := startBridge(t, script.String(), bridge.Options{})
	ide := add("ide", true, 1<<16)

	// The slow host: what its writer writes goes into a pipe that the
	// test reads only once both floods are through (io.Pipe: a write
	// waits for the read), so all of the first flood waits in its queue.
	hr, hw := io.Pipe()
	or, ow := io.Pipe()
	t.Cleanup(func() { ow.Close(); hw.Close() })
	slowIn := make(chan string)
	go func() {
		defer close(slowIn)
		r := bufio.NewReaderSize(or, 64<<10)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			slowIn <- strings.TrimSuffix(line, "\n")
		}
	}()
	slow := bridge.NewHost("slow", bridge.NewNDJSONConn(hr, ow, hr, 0), bridge.HostOptions{QueueLen: 1 << 16})
	b.AddHost(slow)
	slowNext := func() string {
		t.Helper()
		select {
		case l, ok := <-slowIn:
			if !ok {
				t.Fatalf("slow host closed: %v", slow.Err())
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for the slow host (gone: %v)", slow.Err())
		}
		return ""
	}

	ide.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	ide.next()
	for id := 2; id <= 3; id++ {
		ide.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`, id))
		ide.next()
	}
	fmt.Fprintf(hw, "%s\n", `{"jsonrpc":"2.0","id":"att","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"none"}}`)
	if l := slowNext(); !strings.Contains(l, `"id":"att","result"`) {
		t.Fatalf("attach: %s", l)
	}

	// The IDE gets each flood, byte for byte; the slow host reads nothing.
	expect := func(want []string, id int) {
		t.Helper()
		for i, w := range want {
			select {
			case got := <-ide.in:
				if got != w {
					t.Fatalf("ide: notification %d of prompt %d:\n got %.120q...\nwant %.120q...", i, id, got, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("ide: timed out at notification %d of prompt %d", i, id)
			}
		}
		if m := ide.next(); m["id"] != float64(id) || m["result"] == nil {
			t.Fatalf("prompt %d: %v", id, m)
		}
	}
	ide.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	expect(first, 4)
	made := bridge.BlocksMade()
	ide.send(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s2","prompt":[]}}`)
	expect(second, 5)
	// The second flood spans about 13 blocks besides the long line's; with
	// the slow host holding the first flood's, only the IDE's are free to
	// reuse (the race detector's pool drops a quarter of what it is given).
	var size int
	for _, l := range second {
		size += len(l) + 1
	}
	blocks := int64(size / bridge.BlockBytes)
	if newBlocks := bridge.BlocksMade() - made; newBlocks > blocks*3/4 {
		t.Errorf("the second flood made %d new blocks of about %d: blocks the IDE wrote are not reused", newBlocks, blocks)
	}

	for i, w := range first {
		if got := slowNext(); got != w {
			t.Fatalf("slow host: notification %d:\n got %.120q...\nwant %.120q...", i, got, w)
		}
	}
	if slow.Err() != nil {
		t.Fatalf("slow host disconnected: %v", slow.Err())
	}

	// A host attaching now gets the first flood from the replay log:
	// coalesced runs of chunks and the tool call updates whole.
	late := add("late", false, 1<<16)
	late.send(`{"jsonrpc":"2.0","id":"att","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"full"}}`)
	if m := late.next(); m["id"] != "att" || m["result"] == nil {
		t.Fatalf("attach: %v", m)
	}
	checkReplay(t, late, first)
}

// checkReplay reads the replay of flood (as floodLines writes it) from h:
// each run of chunks with one messageId as one chunk of the run's text,
// anything else byte for byte.
func checkReplay(t *testing.T, h *testHost, flood []string) {
	t.Helper()
	type chunk struct {
		Params struct {
			Update struct {
				SessionUpdate string
				Content       json.RawMessage
				MessageID     string `json:"messageId"`
			}
		}
	}
	// decode returns line's sessionUpdate, messageId and text, if any.
	decode := func(line string) (kind, mid, text string) {
		var c chunk
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("replay: %v in %.120q", err, line)
		}
		u := c.Params.Update
		var content struct{ Text string }
		json.Unmarshal(u.Content, &content) // an array for a tool call update
		return u.SessionUpdate, u.MessageID, content.Text
	}
	var text strings.Builder
	mid := ""
	got := func() string {
		t.Helper()
		select {
		case l := <-h.in:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("timed out waiting for the replay")
		}
		return ""
	}
	endRun := func() {
		t.Helper()
		if mid == "" {
			return
		}
		kind, m, txt := decode(got())
		if kind != "agent_message_chunk" || m != mid || txt != text.String() {
			t.Fatalf("replayed run of message %s: %s of message %s with %d bytes of text, want %d bytes", mid, kind, m, len(txt), text.Len())
		}
		text.Reset()
		mid = ""
	}
	for _, l := range flood {
		if kind, m, txt := decode(l); kind == "agent_message_chunk" {
			if m != mid {
				endRun()
				mid = m
			}
			text.WriteString(txt)
			continue
		}
		endRun()
		if r := got(); r != l {
			t.Fatalf("replayed notification:\n got %.120q...\nwant %.120q...", r, l)
		}
	}
	endRun()
}

// TestLateHostGetsAReplayLongerThanItsQueue: a host whose writer queue
// holds 64 messages attaches to a session whose replay log holds far more
// entries (1,500 tool call updates and the runs of chunks between them):
// the replay is one hand-over, so the host gets all of it instead of being
// dropped as too slow.
func TestLateHostGetsAReplayLongerThanItsQueue(t *testing.T) {
	const n = 15000
	flood := floodLines("s1", n)
	add := promptedThrough(t, flood, bridge.Options{})
	late := add("late", false, 64)
	late.send(`{"jsonrpc":"2.0","id":"att","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"full"}}`)
	if m := late.next(); m["id"] != "att" || m["result"] == nil {
		t.Fatalf("attach: %v", m)
	}
	checkReplay(t, late, flood)
}

// TestNegativeReplayBudgetKeepsNoReplayLog: with ReplayMaxBytes negative
// (acpmux run without --listen) a session keeps no replay log, so a host
// attaching with historyPolicy "full" gets its result and then live
// traffic only; with the default budget the same attach gets the
// session's updates first.
func TestNegativeReplayBudgetKeepsNoReplayLog(t *testing.T) {
	for _, tc := range []struct {
		budget     int
		wantReplay bool
	}{{0, true}, {-1, false}} {
		t.Run(fmt.Sprint("budget=", tc.budget), func(t *testing.T) {
			add := promptedThrough(t, floodLines("s1", 20), bridge.Options{ReplayMaxBytes: tc.budget})
			late := add("late", false, 64)
			late.send(`{"jsonrpc":"2.0","id":"att","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"full"}}`)
			m := late.next()
			if m["id"] != "att" || m["result"] == nil {
				t.Fatalf("attach: %v", m)
			}
			if got, want := m["result"].(map[string]any)["historyPolicy"], map[bool]string{true: "full", false: "pending_only"}[tc.wantReplay]; got != want {
				t.Fatalf("attach result's historyPolicy %v, want %s (what the host gets)", got, want)
			}
			// A second attach's result comes right after the first's
			// unless a replay is queued between them.
			late.send(`{"jsonrpc":"2.0","id":"att2","method":"session/attach","params":{"sessionId":"s1","historyPolicy":"none"}}`)
			m = late.next()
			if gotReplay := m["method"] == "session/update"; gotReplay != tc.wantReplay {
				t.Fatalf("after the attach's result: %v; want a replayed update: %v", m, tc.wantReplay)
			}
			if !tc.wantReplay && m["id"] != "att2" {
				t.Fatalf("after the attach's result: %v, want the second attach's result", m)
			}
		})
	}
}

// promptedThrough starts a bridge with opts whose agent answers one
// prompt turn of session s1 with the notifications flood, and an IDE host
// that runs that turn to its end; it returns the bridge's add.
func promptedThrough(t *testing.T, flood []string, opts bridge.Options) func(id string, blocking bool, queue int) *testHost {
	t.Helper()
	var script strings.Builder
	script.WriteString(`recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
`)
	for _, l := range flood {
		script.WriteString("send " + l + "\n")
	}
	script.WriteString(`send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}` + "\n")
	script.WriteString("waiteof\n")
	_, add, _ := startBridge(t, script.String(), opts)
	ide := add("ide", true, 1<<16)
	ide.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	ide.next()
	ide.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	ide.next()
	ide.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	for {
		if m := ide.next(); m["id"] != nil {
			return add // the prompt's response: the flood went by
		}
	}
}
