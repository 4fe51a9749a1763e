package bridge

import (
	"bytes"

	"github.com/acpmux/acpmux/acp"
)

// DefaultReplayMaxBytes bounds one session's replay log: 16 MiB.
const DefaultReplayMaxBytes = 16 << 20

// replayLog keeps a session's session/update notifications for hosts that
// attach later. Consecutive plain text chunks of one message
// (agent_message_chunk, user_message_chunk, agent_thought_chunk with the
// same messageId and nothing but sessionId, sessionUpdate, content
// {type:"text", text} and messageId) are coalesced by appending their raw,
// still JSON-escaped text, so a turn of 200,000 chunks costs one entry and
// amortised O(1) per chunk. Any other notification is kept byte-for-byte.
// When the log is over its byte budget the oldest entries are dropped.
type replayLog struct {
	entries []replayEntry
	head    int // index of the oldest kept entry
	bytes   int
	max     int
}

type replayEntry struct {
	raw   []byte    // a whole notification, or nil for a chunk run
	chunk *chunkRun // coalesced text chunks
}

type chunkRun struct {
	session   []byte // raw sessionId value
	kind      string
	messageID []byte // raw messageId value, nil when absent
	text      []byte // JSON-escaped text, without quotes
}

func newReplayLog(max int) *replayLog {
	if max <= 0 {
		max = DefaultReplayMaxBytes
	}
	return &replayLog{max: max}
}

var chunkKinds = map[string]bool{"agent_message_chunk": true, "user_message_chunk": true, "agent_thought_chunk": true}

// append records notification msg with params and their member update
// (nil: take it from params).
func (l *replayLog) append(msg, params, update []byte) {
	if update == nil {
		update = acp.MemberBytes(params, "update")
	}
	if run := chunkOf(params, update); run != nil {
		if last := l.last(); last != nil && last.chunk != nil && last.chunk.kind == run.kind &&
			bytes.Equal(last.chunk.messageID, run.messageID) && bytes.Equal(last.chunk.session, run.session) {
			last.chunk.text = append(last.chunk.text, run.text...)
			l.bytes += len(run.text)
		} else {
			run.text = append([]byte(nil), run.text...)
			l.entries = append(l.entries, replayEntry{chunk: run})
			l.bytes += len(run.text) + 128
		}
	} else {
		l.entries = append(l.entries, replayEntry{raw: msg})
		l.bytes += len(msg)
	}
	l.evict()
}

// chunkOf returns the chunk run a notification with these params (and
// their member update) would start, or nil if it must be kept as it is.
func chunkOf(params, update []byte) *chunkRun {
	var u [3]acp.Span
	if _, others := acp.Members(update, updateMembers, u[:]); others {
		return nil
	}
	kind, _ := acp.StringValue(u[0].Bytes(update))
	if !chunkKinds[kind] {
		return nil
	}
	var p [2]acp.Span
	if _, others := acp.Members(params, paramsMembers, p[:]); others {
		return nil
	}
	content := u[1].Bytes(update)
	var c [2]acp.Span
	if _, others := acp.Members(content, contentMembers, c[:]); others || string(c[0].Bytes(content)) != `"text"` {
		return nil
	}
	text := c[1].Bytes(content)
	if len(text) < 2 || text[0] != '"' {
		return nil
	}
	return &chunkRun{
		session:   p[0].Bytes(params),
		kind:      kind,
		messageID: u[2].Bytes(update),
		text:      text[1 : len(text)-1],
	}
}

var (
	updateMembers  = []string{"sessionUpdate", "content", "messageId"}
	paramsMembers  = []string{"sessionId", "update"}
	contentMembers = []string{"type", "text"}
)

func (l *replayLog) last() *replayEntry {
	if len(l.entries) == l.head {
		return nil
	}
	return &l.entries[len(l.entries)-1]
}

// evict drops the oldest entries while over budget, keeping the newest.
func (l *replayLog) evict() {
	for l.bytes > l.max && len(l.entries)-l.head > 1 {
		e := l.entries[l.head]
		if e.chunk != nil {
			l.bytes -= len(e.chunk.text) + 128
		} else {
			l.bytes -= len(e.raw)
		}
		l.entries[l.head] = replayEntry{}
		l.head++
	}
	if l.head > 1024 && l.head*2 > len(l.entries) {
		l.entries = append([]replayEntry(nil), l.entries[l.head:]...)
		l.head = 0
	}
}

// messages returns the log as notifications, oldest first.
func (l *replayLog) messages() [][]byte {
	out := make([][]byte, 0, len(l.entries)-l.head)
	for _, e := range l.entries[l.head:] {
		if e.raw != nil {
			out = append(out, e.raw)
			continue
		}
		c := e.chunk
		var m bytes.Buffer
		m.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`)
		m.Write(c.session)
		m.WriteString(`,"update":{"sessionUpdate":"` + c.kind + `","content":{"type":"text","text":"`)
		m.Write(c.text)
		m.WriteString(`"}`)
		if c.messageID != nil {
			m.WriteString(`,"messageId":`)
			m.Write(c.messageID)
		}
		m.WriteString(`}}}`)
		out = append(out, m.Bytes())
	}
	return out
}
