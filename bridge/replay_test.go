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
