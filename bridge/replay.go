package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/acpmux/acpmux/acp"
)

// DefaultReplayMaxBytes bounds one session's replay log: 16 MiB.
const DefaultReplayMaxBytes = 16 << 20

// replayBlock is the size of the blocks coalesced chunk text is kept in.
const replayBlock = 64 << 10

// replayFirstBlock is the least a chunk run's first block holds: it
// starts at the size of the run's first chunk (at least this) and doubles,
// moving its text, until it is a replayBlock, so a short message does not
// keep a whole block.
const replayFirstBlock = 256

// replayLog keeps a session's session/update notifications for hosts that
// attach later. Consecutive plain text chunks of one message
// (agent_message_chunk, user_message_chunk, agent_thought_chunk with the
// same messageId and nothing but sessionId, sessionUpdate, content
// {type:"text", text} and messageId) are coalesced by appending their raw,
// still JSON-escaped text to 64 KiB blocks (a run's first block grows to
// that size from its first chunk's, so a short message keeps little), so
// a turn of 200,000 chunks is one entry and costs O(1) per chunk with no
// copying of what came before its first 64 KiB. Any other notification is kept byte-for-byte. Over its byte
// budget the log drops its oldest entries, a single run too long for the
// budget drops its oldest text blocks, and a single notification (or chunk)
// larger than the budget is kept as a short marker (omittedMarker).
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
	session   []byte   // raw sessionId value
	kind      string   // sessionUpdate
	messageID []byte   // raw messageId value, nil when absent
	text      [][]byte // JSON-escaped text, without quotes, in blocks
	size      int      // bytes in text
	spare     []byte   // the last dropped block, reused by the next add that needs one
}

// add appends the escaped text of one chunk. A chunk is never split
// across blocks, so every block boundary falls between whole chunks: a
// dropped block never leaves half an escape sequence behind.
func (c *chunkRun) add(text []byte) {
	c.size += len(text)
	n := len(c.text)
	if n == 1 {
		// The first block grows (replayFirstBlock) while the text fits in
		// a replayBlock.
		first := c.text[0]
		if need := len(first) + len(text); need > cap(first) && cap(first) < replayBlock && need <= replayBlock {
			grown := make([]byte, len(first), min(max(2*cap(first), need), replayBlock))
			copy(grown, first)
			c.text[0] = grown
		}
	}
	if n == 0 || len(c.text[n-1])+len(text) > cap(c.text[n-1]) {
		var blk []byte
		switch {
		case n == 0:
			blk = make([]byte, 0, max(replayFirstBlock, len(text)))
		case c.spare != nil && cap(c.spare) >= len(text):
			blk = c.spare
		default:
			blk = make([]byte, 0, max(replayBlock, len(text)))
		}
		c.spare = nil
		c.text = append(c.text, blk[:0])
		n++
	}
	c.text[n-1] = append(c.text[n-1], text...)
}

// finish is called when another entry follows the run, which then takes
// no more text: it lets go of the spare block and moves a last block that
// is mostly empty into one of its text's size.
func (c *chunkRun) finish() {
	c.spare = nil
	n := len(c.text)
	if n == 0 {
		return
	}
	if last := c.text[n-1]; cap(last)-len(last) > len(last) {
		c.text[n-1] = bytes.Clone(last)
	}
}

// dropBlock drops the oldest text block, keeping it as the spare when it
// is of the usual size: a run over the budget then turns over its blocks
// instead of allocating a new one for each it drops. Nothing else refers
// to a block (messages copies the text out).
func (c *chunkRun) dropBlock() {
	c.size -= len(c.text[0])
	if cap(c.text[0]) == replayBlock {
		c.spare = c.text[0]
	}
	c.text[0] = nil
	c.text = c.text[1:]
}

// newReplayLog returns a log of at most max bytes (DefaultReplayMaxBytes
// when 0), or nil when max is negative: a nil log keeps nothing and
// replays nothing.
func newReplayLog(max int) *replayLog {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = DefaultReplayMaxBytes
	}
	return &replayLog{max: max}
}

// append records notification msg with params and their member update
// (nil: take it from params).
func (l *replayLog) append(msg, params, update []byte) {
	if l == nil {
		return
	}
	var p [2]acp.Span
	_, others := acp.Members(params, paramsMembers, p[:])
	if update == nil {
		update = p[1].Bytes(params)
	}
	l.appendParsed(msg, p[0].Bytes(params), update, !others)
}

// appendParsed is append with params already split: sid is the raw
// sessionId, plain reports that params hold nothing but sessionId and
// update.
func (l *replayLog) appendParsed(msg, sid, update []byte, plain bool) {
	if kind, mid, text, ok := chunkOf(update, plain); ok && len(text)+chunkOverhead <= l.max {
		l.appendChunk(sid, kind, mid, text)
		return
	}
	l.appendRaw(msg, sid, update)
}

// appendRaw keeps msg whole (a copy: msg may share its block with many
// other messages), or a short marker when msg alone is over the budget.
func (l *replayLog) appendRaw(msg, sid, update []byte) {
	if len(msg) > l.max {
		msg = omittedMarker(sid, update, len(msg), l.max)
	} else {
		msg = bytes.Clone(msg)
	}
	l.finishLast()
	l.entries = append(l.entries, replayEntry{raw: msg})
	l.bytes += len(msg)
	l.evict()
}

// appendChunk adds the escaped text of a plain text chunk of kind, in
// session sid (raw) and message mid (raw, nil when absent).
func (l *replayLog) appendChunk(sid, kind, mid, text []byte) {
	if last := l.last(); last != nil && last.chunk != nil && last.chunk.kind == string(kind) &&
		bytes.Equal(last.chunk.messageID, mid) && bytes.Equal(last.chunk.session, sid) {
		last.chunk.add(text)
		l.bytes += len(text)
	} else {
		// Copies: the run must not keep the whole message alive.
		run := &chunkRun{session: bytes.Clone(sid), kind: string(kind), messageID: bytes.Clone(mid)}
		run.add(text)
		l.finishLast()
		l.entries = append(l.entries, replayEntry{chunk: run})
		l.bytes += len(text) + chunkOverhead
	}
	l.evict()
}

// appendUpdate is append for a session/update notification msg whose
// parts Parse located (spans relative to msg).
func (l *replayLog) appendUpdate(msg []byte, u *acp.UpdateSpans) {
	if l == nil {
		return
	}
	sid := u.SessionID.Bytes(msg)
	if kind, text, ok := chunkOfSpans(msg, u); ok && len(text)+chunkOverhead <= l.max {
		l.appendChunk(sid, kind, u.MessageID.Bytes(msg), text)
		return
	}
	l.appendRaw(msg, sid, u.Update.Bytes(msg))
}

// chunkOverhead is what a chunk run costs the budget besides its text.
const chunkOverhead = 128

// omittedMarker is what the replay log keeps instead of a notification of
// size bytes, more than the log's budget max: a valid session/update of the
// same session, an agent_message_chunk whose text says what was left out,
// with _meta.acpmux.replayOmitted {sessionUpdate, bytes} for hosts that
// read it (the agent cannot forge it: acpmux removes the agent's
// _meta.acpmux). The live notification itself reaches every host in full.
// See docs/protocol.md.
func omittedMarker(sid, update []byte, size, max int) []byte {
	kind, ok := acp.StringValue(acp.MemberBytes(update, "sessionUpdate"))
	if !ok || len(kind) > 64 {
		kind = "unknown"
	}
	k, _ := json.Marshal(kind)
	text, _ := json.Marshal(fmt.Sprintf("[acpmux: a session/update (%s) of %d bytes is not replayed: it is larger than the replay budget of %d bytes]", kind, size, max))
	if sid == nil {
		sid = []byte("null")
	}
	return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + string(sid) +
		`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + string(text) +
		`},"_meta":{"acpmux":{"replayOmitted":{"sessionUpdate":` + string(k) + `,"bytes":` + strconv.Itoa(size) + `}}}}}}`)
}

// chunkOfSpans is chunkOf on the parts Parse located.
func chunkOfSpans(msg []byte, u *acp.UpdateSpans) (kind, text []byte, ok bool) {
	if u.ParamsOther || u.UpdateOther || u.ContentOther {
		return
	}
	switch k := u.Kind.Bytes(msg); string(k) {
	case `"agent_message_chunk"`, `"user_message_chunk"`, `"agent_thought_chunk"`:
		kind = k[1 : len(k)-1]
	default:
		return
	}
	if string(u.ContentType.Bytes(msg)) != `"text"` {
		return
	}
	t := u.Text.Bytes(msg)
	if len(t) < 2 || t[0] != '"' {
		return
	}
	return kind, t[1 : len(t)-1], true
}

// chunkOf reports whether a notification whose params are plain (nothing
// but sessionId and update) with this update is a plain text chunk, and
// returns its parts.
func chunkOf(update []byte, plain bool) (kind, mid, text []byte, ok bool) {
	if !plain {
		return
	}
	var u [3]acp.Span
	if _, others := acp.Members(update, updateMembers, u[:]); others {
		return
	}
	switch k := u[0].Bytes(update); string(k) {
	case `"agent_message_chunk"`, `"user_message_chunk"`, `"agent_thought_chunk"`:
		kind = k[1 : len(k)-1]
	default:
		return
	}
	content := u[1].Bytes(update)
	var c [2]acp.Span
	if _, others := acp.Members(content, contentMembers, c[:]); others || string(c[0].Bytes(content)) != `"text"` {
		return
	}
	t := c[1].Bytes(content)
	if len(t) < 2 || t[0] != '"' {
		return
	}
	return kind, u[2].Bytes(update), t[1 : len(t)-1], true
}

var (
	updateMembers  = []string{"sessionUpdate", "content", "messageId"}
	paramsMembers  = []string{"sessionId", "update"}
	contentMembers = []string{"type", "text"}
)

// finishLast finishes the newest entry's chunk run, if it is one: an
// entry is about to follow it.
func (l *replayLog) finishLast() {
	if last := l.last(); last != nil && last.chunk != nil {
		last.chunk.finish()
	}
}

func (l *replayLog) last() *replayEntry {
	if len(l.entries) == l.head {
		return nil
	}
	return &l.entries[len(l.entries)-1]
}

// evict drops the oldest entries while over budget, keeping the newest;
// a newest entry that alone is over budget loses its oldest text blocks.
func (l *replayLog) evict() {
	for l.bytes > l.max && len(l.entries)-l.head > 1 {
		e := l.entries[l.head]
		if e.chunk != nil {
			l.bytes -= e.chunk.size + chunkOverhead
		} else {
			l.bytes -= len(e.raw)
		}
		l.entries[l.head] = replayEntry{}
		l.head++
	}
	if last := l.last(); last != nil && last.chunk != nil {
		for l.bytes > l.max && len(last.chunk.text) > 1 {
			before := last.chunk.size
			last.chunk.dropBlock()
			l.bytes -= before - last.chunk.size
		}
	}
	if l.head > 1024 && l.head*2 > len(l.entries) {
		l.entries = append([]replayEntry(nil), l.entries[l.head:]...)
		l.head = 0
	}
}

// messages returns the log as notifications, oldest first.
func (l *replayLog) messages() [][]byte {
	if l == nil {
		return nil
	}
	out := make([][]byte, 0, len(l.entries)-l.head)
	for _, e := range l.entries[l.head:] {
		if e.raw != nil {
			out = append(out, e.raw)
			continue
		}
		c := e.chunk
		var m bytes.Buffer
		m.Grow(c.size + 160)
		m.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`)
		m.Write(c.session)
		m.WriteString(`,"update":{"sessionUpdate":"` + c.kind + `","content":{"type":"text","text":"`)
		for _, blk := range c.text {
			m.Write(blk)
		}
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
