package bridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func chunkMsg(text string) []byte {
	t, _ := json.Marshal(text)
	return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + string(t) + `}}}}`)
}

func appendMsg(l *replayLog, msg []byte) {
	params := []byte(strings.TrimSuffix(strings.SplitN(string(msg), `"params":`, 2)[1], "}"))
	l.append(msg, params, nil)
}

// TestReplayCoalescesChunks: plain text chunks become one message whose
// text is their concatenation (escapes included); anything else is kept.
func TestReplayCoalescesChunks(t *testing.T) {
	l := newReplayLog(0)
	for _, s := range []string{"caf", "é \"q\" ", "\u2028\n", "end"} {
		appendMsg(l, chunkMsg(s))
	}
	other := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`)
	appendMsg(l, other)
	msgs := l.messages()
	if len(msgs) != 2 || string(msgs[1]) != string(other) {
		t.Fatalf("got %d messages: %s", len(msgs), msgs)
	}
	var m struct {
		Params struct {
			Update struct {
				Content struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(msgs[0], &m); err != nil || m.Params.Update.Content.Text != "café \"q\" \u2028\nend" {
		t.Fatalf("coalesced %q (%v)", m.Params.Update.Content.Text, err)
	}
}

// TestReplayBoundedByBytes: 200,000 chunks of one message stay within the
// budget and the replayed message is valid JSON (blocks are dropped whole).
func TestReplayBoundedByBytes(t *testing.T) {
	l := newReplayLog(1 << 20)
	for i := range 200000 {
		appendMsg(l, chunkMsg(fmt.Sprintf("token %d \"quoted\" \\ é; ", i)))
	}
	if l.bytes > 1<<20+replayBlock {
		t.Errorf("log holds %d bytes, budget %d", l.bytes, 1<<20)
	}
	msgs := l.messages()
	if len(msgs) != 1 || !json.Valid(msgs[0]) {
		t.Fatalf("replay: %d messages, valid JSON %v", len(msgs), len(msgs) == 1 && json.Valid(msgs[0]))
	}
	if !strings.Contains(string(msgs[0]), `token 199999 \"quoted\"`) {
		t.Error("the newest text was dropped")
	}
}

// TestReplayEntryOverBudgetBecomesMarker: a single notification or chunk
// larger than the budget is not kept; the log holds a short, valid
// session/update marker saying what was left out, and stays within budget.
func TestReplayEntryOverBudgetBecomesMarker(t *testing.T) {
	big := strings.Repeat("x", 4096)
	for name, msg := range map[string][]byte{
		"chunk":     chunkMsg(big),
		"tool_call": []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"` + big + `"}}}`),
	} {
		t.Run(name, func(t *testing.T) {
			const budget = 1024
			l := newReplayLog(budget)
			appendMsg(l, chunkMsg("before"))
			appendMsg(l, msg)
			msgs := l.messages()
			total := 0
			for _, m := range msgs {
				total += len(m)
			}
			if total > budget || len(msgs) != 2 {
				t.Fatalf("replay holds %d messages, %d bytes; budget %d", len(msgs), total, budget)
			}
			var m struct {
				Method string
				Params struct {
					SessionID string
					Update    struct {
						SessionUpdate string
						Content       struct{ Type, Text string }
						Meta          struct {
							Acpmux struct {
								ReplayOmitted struct {
									SessionUpdate string
									Bytes         int
								}
							}
						} `json:"_meta"`
					}
				}
			}
			if err := json.Unmarshal(msgs[1], &m); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"chunk": "agent_message_chunk", "tool_call": "tool_call"}[name]
			om := m.Params.Update.Meta.Acpmux.ReplayOmitted
			if m.Method != "session/update" || m.Params.SessionID != "s" || m.Params.Update.SessionUpdate != "agent_message_chunk" ||
				m.Params.Update.Content.Type != "text" || !strings.Contains(m.Params.Update.Content.Text, "not replayed") ||
				om.SessionUpdate != want || om.Bytes != len(msg) {
				t.Errorf("marker %s", msgs[1])
			}
		})
	}
}

// replayCapacity is the bytes a replay log's text blocks occupy, spare
// blocks included.
func replayCapacity(l *replayLog) (n int) {
	for _, e := range l.entries[l.head:] {
		if e.chunk != nil {
			for _, b := range e.chunk.text {
				n += cap(b)
			}
			n += cap(e.chunk.spare)
		}
	}
	return n
}

// TestReplayBlocksHoldAboutTheirText: a session of many short agent
// messages between tool calls (each message its own chunk run) keeps
// blocks of about its text's size, not a 64 KiB block per message; a run
// that ends with a mostly empty block, or with a spare block from turning
// over its budget, gives them up when the next entry follows.
func TestReplayBlocksHoldAboutTheirText(t *testing.T) {
	l := newReplayLog(0)
	text := 0
	for i := range 200 {
		msg := chunkMsg(fmt.Sprintf("message %d: a short answer of the agent, about a hundred bytes long, before its next tool call", i))
		appendMsg(l, msg)
		appendMsg(l, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c%d","title":"ls"}}}`, i)))
		text += len(msg) - len(chunkMsg(""))
	}
	if got, limit := replayCapacity(l), 200*replayFirstBlock; got > limit {
		t.Errorf("200 short messages (%d bytes of text) occupy %d bytes of blocks, want at most %d", text, got, limit)
	}

	// One run of 70 KB: two blocks, the second mostly empty once a tool
	// call follows.
	l = newReplayLog(0)
	chunk := strings.Repeat("x", 1000)
	for range 70 {
		appendMsg(l, chunkMsg(chunk))
	}
	appendMsg(l, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls"}}}`))
	if got, limit := replayCapacity(l), replayBlock+70*len(chunk)/2; got > limit {
		t.Errorf("a finished run of 70,000 bytes occupies %d bytes of blocks, want at most %d", got, limit)
	}

	// A run over a budget of 4 blocks turns over its blocks with a spare;
	// the spare goes when the run ends.
	l = newReplayLog(4 * replayBlock)
	for range 400 {
		appendMsg(l, chunkMsg(chunk))
	}
	appendMsg(l, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls"}}}`))
	if got := replayCapacity(l); got > 4*replayBlock {
		t.Errorf("a finished run over a budget of %d bytes occupies %d bytes of blocks, want at most the budget", 4*replayBlock, got)
	}
	msgs := l.messages()
	if len(msgs) != 2 {
		t.Fatalf("replay has %d messages, want the run and the tool call", len(msgs))
	}
	var m struct {
		Params struct {
			Update struct {
				Content struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(msgs[0], &m); err != nil || len(m.Params.Update.Content.Text)%len(chunk) != 0 || !strings.HasPrefix(m.Params.Update.Content.Text, chunk) {
		t.Errorf("the run's replayed text is not whole chunks (%v, %d bytes)", err, len(m.Params.Update.Content.Text))
	}
}
