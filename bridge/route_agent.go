package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/acpmux/acpmux/acp"
)

// readAgent reads agent messages until its stdout closes or a message is
// over the cap (a protocol failure that stops the agent).
func (b *Bridge) readAgent() {
	sr, _ := b.agent.conn.(sharedReader)
	var lr *lineReader // the agent's line reader when runs may take lines from it (no tap)
	if c, ok := b.agent.conn.(*ndjsonConn); ok && c.lr.recycle && b.plainRuns {
		lr = c.lr
	}
	buffered := false // a whole line is read: the next read does not wait
	for {
		if !buffered {
			b.inRead.Store(true)
		}
		var msg []byte
		var err error
		if sr != nil {
			// Lent until the next read: fromAgent retains the block for
			// what it queues and copies anything else it keeps.
			msg, b.line, err = sr.readShared()
			b.lineAt = -1
			if b.line != nil {
				b.lineAt = sr.lentAt(msg)
			}
		} else {
			msg, err = b.agent.conn.ReadMessage()
		}
		if !buffered {
			b.inRead.Store(false)
			b.reads.Add(1)
		}
		if errors.Is(err, ErrLineTooLong) {
			b.flushPending() // the whole lines before it still go to the hosts
			b.log.Error("agent message too large; stopping the agent", "err", err)
			b.setAgentFailure(fmt.Errorf("agent message too large: %v", err))
			b.agent.CloseStdin()
			b.agent.Signal(syscall.SIGTERM)
			return
		}
		if err != nil {
			b.flushPending()
			return
		}
		b.fromAgent(msg)
		if lr != nil && b.run.lines > 0 {
			b.extendRun(lr)
		}
		b.line, b.lineAt = nil, -1
		if buffered = b.agent.lineBuffered() || b.agent.fillNow(); !buffered {
			// About to wait for the agent: hand over what is pending.
			// (While its pipe holds more, the reader reads on first, so a
			// burst reaches the hosts in batches of up to maxPending.)
			b.flushPending()
		}
	}
}

// pendingBatch is what the agent reader has for one host and not handed
// over yet. Only the agent reader goroutine touches b.pending.
type pendingBatch struct {
	h     *Host
	batch hostBatch
}

// maxPending bounds a host's pending batch before it is handed over, in
// messages (a run of lines counts each): during a flood, a host is
// written (and woken) once for about this many notifications.
const maxPending = 1024

// msgsPool holds message slices of maxPending for pending batches: a
// host's writer gives one back once it has taken the messages out
// (recycleMsgs), so a flood does not allocate one per batch.
var msgsPool = sync.Pool{New: func() any { s := make([][]byte, 0, maxPending); return &s }}

// recycleMsgs gives msgs, a batch's slice whose messages were taken out,
// back to msgsPool (one of another size is left to the collector).
func recycleMsgs(msgs [][]byte) {
	if cap(msgs) == maxPending {
		clear(msgs)
		msgs = msgs[:0]
		msgsPool.Put(&msgs)
	}
}

// enqueue adds a notification for h to its pending batch: the reader hands
// a host many notifications at once, one wakeup of its writer per burst
// instead of one per message. msg may be a line lent by the agent's conn
// (its block is b.line): the batch retains the block until h's writer
// has written it.
func (b *Bridge) enqueue(h *Host, msg []byte) {
	off := -1
	if b.joinable(msg) {
		off = b.lineAt
	}
	b.enqueueLines(h, msg, b.line, off, 1)
}

// enqueueLines adds msg for h to its pending batch, handing the batch over
// first when msg would take it past maxPending messages and after when it
// holds maxPending. msg is one message, of blk or the bridge's own (blk
// nil), when off < 0; when off >= 0 it is lines whole lines of blk one
// after the other, blk.buf[off:off+len(msg)] with a "\n" between each two
// and one after the last: an NDJSON host takes them in one piece
// (hostBatch.addLines), any other host one message a line.
func (b *Bridge) enqueueLines(h *Host, msg []byte, blk *lineBlock, off, lines int) {
	var p *pendingBatch
	for i := range b.pending {
		if b.pending[i].h == h {
			p = &b.pending[i]
			break
		}
	}
	if p == nil {
		b.pending = append(b.pending, pendingBatch{h: h, batch: hostBatch{msgs: *msgsPool.Get().(*[][]byte)}})
		p = &b.pending[len(b.pending)-1]
	}
	if p.batch.n > 0 && p.batch.n+lines > maxPending {
		// A batch holds at most maxPending messages: a host's queue
		// bounds (--host-queue, the IDE's 1024) count them, and a
		// blocking host takes any one batch into an empty queue.
		h.deliver(p.batch)
		p.batch = hostBatch{msgs: *msgsPool.Get().(*[][]byte)}
	}
	switch {
	case off >= 0 && h.joinsLines():
		p.batch.addLines(msg, blk, off, lines)
	case lines == 1:
		p.batch.add(msg, blk)
	default:
		for len(msg) > 0 {
			k := bytes.IndexByte(msg, '\n')
			if k < 0 {
				k = len(msg)
			}
			p.batch.add(msg[:k:k], blk)
			msg = msg[min(k+1, len(msg)):]
		}
	}
	if p.batch.n >= maxPending {
		h.deliver(p.batch)
		p.batch = hostBatch{msgs: *msgsPool.Get().(*[][]byte)}
	}
}

// agentRun is a run of plain session/update notifications of one session
// that lie one after the other in one block of the agent's stdout, read
// but not routed yet: the reader routes the whole run at once (one look
// at the session's hosts and one append of its lines to the session's
// replay log under b.mu, one entry in each NDJSON host's batch) instead
// of line by line. A plain notification is one that agentNotification
// would only keep in the replay log and fan out to the session's hosts:
// a session/update without _meta whose sessionUpdate the broker does not
// follow, on a bridge without Watch (Bridge.plainRuns). Only the agent
// reader goroutine touches it.
type agentRun struct {
	blk      *lineBlock // the lines' block, retained while the run is pending
	off, end int        // the run is blk.buf[off:end], a "\n" at end
	lines    int
	sid      []byte    // the raw sessionId of its lines (empty: none)
	parts    []runLine // each line's parts for the replay log (Bridge.runReplay)
}

// runLine is a line of a run, blk.buf[off:off+n], and the parts of its
// update Parse located, for the session's replay log.
type runLine struct {
	off, n int
	u      acp.UpdateSpans
}

// plainLine reports whether msg, an agent message Parse accepted with
// env, is a plain notification (agentRun): a session/update without
// _meta whose sessionUpdate is none that the broker or the mode tracking
// follows (agentNotification).
func plainLine(msg []byte, env *acp.Envelope) bool {
	return env.Kind == acp.KindNotification && env.Method == acp.MethodSessionUpdate && !env.MetaNames &&
		!env.Update.UpdateOther && followedUpdate(env.Update.Kind.Bytes(msg)) == followNone
}

// follow is what the bridge does with a session/update besides fanning it
// out (agentNotification).
type follow int

const (
	followNone     follow = iota
	followToolCall        // tool_call, tool_call_update: the broker's tool call state
	followMode            // current_mode_update, config_option_update: the mode tracking
)

// followedUpdate returns what the bridge follows of a session/update whose
// sessionUpdate is raw (a JSON string; nil when absent). An escaped
// spelling ("tool\u005fcall_update") is the same value to every host's
// decoder, so it is decoded first; without a backslash raw is compared as
// it is, with no allocation.
func followedUpdate(raw []byte) follow {
	if bytes.IndexByte(raw, '\\') >= 0 {
		if s, ok := acp.StringValue(raw); ok {
			raw = strconv.AppendQuote(nil, s)
		}
	}
	switch string(raw) {
	case `"tool_call"`, `"tool_call_update"`:
		return followToolCall
	case `"current_mode_update"`, `"config_option_update"`:
		return followMode
	}
	return followNone
}

// addToRun adds msg, a plain notification lent at off in blk with its
// "\n" after it (u: the parts of its update), to the reader's run, first
// routing the run when msg does not continue it (another block, not
// right after it, another session), and after it when it reaches
// maxPending lines.
func (b *Bridge) addToRun(msg []byte, u *acp.UpdateSpans, blk *lineBlock, off int) {
	r := &b.run
	sid := u.SessionID.Bytes(msg)
	if r.lines > 0 && (r.blk != blk || r.end+1 != off || !bytes.Equal(r.sid, sid)) {
		b.flushRun()
	}
	if r.lines == 0 {
		r.blk, r.off = blk, off
		r.blk.retain()
		r.sid = append(r.sid[:0], sid...) // none: empty, as sessionByRaw reads it
	}
	r.end = off + len(msg)
	r.lines++
	if b.runReplay {
		r.parts = append(r.parts, runLine{off: off, n: len(msg), u: *u})
	}
	if r.lines >= maxPending {
		b.flushRun()
	}
}

// extendRun takes, after a line that joined the run, the plain
// notifications that follow it whole in the agent's current block
// straight from lr, as fromAgent would take each (counted, parsed,
// valid UTF-8, added to the run), without the per-line work of a read.
// It stops at the first line that is not plain, not whole or not in the
// block: the next read returns it as usual (parsed once more there).
func (b *Bridge) extendRun(lr *lineReader) {
	env := &b.runEnv
	for {
		line, off := lr.peekLine()
		if line == nil {
			return
		}
		if b.agentParser.ParseInto(line, env) != nil || !b.agentParser.ValidUTF8() || !plainLine(line, env) {
			return
		}
		lr.takeLine(len(line))
		b.readMsgs++
		b.readBytes += int64(len(line))
		b.addToRun(line, &env.Update, lr.blk, off)
	}
}

// flushRun routes the reader's run, if any, as agentNotification routes
// each of its lines: into the session's replay log and to its hosts
// (every host when the session is unknown), into their pending batches.
func (b *Bridge) flushRun() {
	r := &b.run
	if r.lines == 0 {
		return
	}
	b.mu.Lock()
	hosts := b.hosts
	if s := b.sessionByRaw(r.sid); s != nil {
		hosts = s.hosts
		for i := range r.parts {
			p := &r.parts[i]
			s.replay.appendUpdate(r.blk.buf[p.off:p.off+p.n], &p.u)
		}
	}
	b.mu.Unlock()
	msg := r.blk.buf[r.off:r.end:r.end]
	for _, h := range hosts {
		b.enqueueLines(h, msg, r.blk, r.off, r.lines)
	}
	r.blk.release() // each batch retained it
	*r = agentRun{sid: r.sid[:0], parts: r.parts[:0]}
	b.runs++
}

// joinable reports whether msg is the lent line itself, at b.lineAt in
// its block b.line with its "\n" after it there (hostBatch.addLine).
func (b *Bridge) joinable(msg []byte) bool {
	off := b.lineAt
	if b.line == nil || off < 0 || len(msg) == 0 {
		return false
	}
	end := off + len(msg)
	return end < len(b.line.buf) && &msg[0] == &b.line.buf[off] && b.line.buf[end] == '\n'
}

// flushPending hands every pending batch to its host, in order, after
// adding the messages read since the last time to stats (so they are
// counted before any reaches a host, without two atomic additions a line).
func (b *Bridge) flushPending() {
	b.flushRun()
	if b.readMsgs > 0 {
		b.stats.agentMsgs.Add(b.readMsgs)
		b.stats.agentBytes.Add(b.readBytes)
		b.readMsgs, b.readBytes = 0, 0
	}
	for i := range b.pending {
		if p := &b.pending[i]; p.batch.n > 0 {
			p.h.deliver(p.batch)
			p.batch = hostBatch{}
		}
	}
	b.pending = b.pending[:0]
}

// fromAgent routes one agent message.
func (b *Bridge) fromAgent(msg []byte) {
	b.readMsgs++
	b.readBytes += int64(len(msg))
	var env acp.Envelope
	err := b.agentParser.ParseInto(msg, &env)
	if errors.Is(err, acp.ErrNotJSON) {
		n := b.stats.nonJSON.Add(1)
		b.log.Warn("agent wrote a non-JSON line to stdout; not forwarded", "line", truncate(msg, 200), "count", n)
		return
	}
	if err != nil {
		b.stats.dropped.Add(1)
		b.log.Warn("agent wrote an invalid JSON-RPC message; not forwarded", "err", err, "line", truncate(msg, 200))
		return
	}
	if !b.agentParser.ValidUTF8() { // utf8.Valid(msg), checked in the parser's pass where it can
		// JSON text is UTF-8 (RFC 8259 section 8.1), and a WebSocket
		// host must close on a text frame that is not (RFC 6455 section
		// 8.1): forwarded, one bad byte would drop every such host.
		b.stats.dropped.Add(1)
		b.log.Warn("agent wrote a line that is not valid UTF-8; not forwarded", "line", truncate(msg, 200))
		return
	}
	if b.plainRuns && b.lineAt >= 0 && b.line != nil && plainLine(msg, &env) {
		b.addToRun(msg, &env.Update, b.line, b.lineAt)
		return
	}
	// Whatever comes next goes after the run's lines.
	b.flushRun()
	if b.line != nil && (env.Kind != acp.KindNotification || env.Method != acp.MethodSessionUpdate) {
		// Only session/update notifications take the lent line to the
		// hosts' queues (agentNotification); anything else may be kept
		// by a goroutine, a map or the broker: a copy of its own, and
		// the spans of env still apply.
		msg = bytes.Clone(msg)
		b.line, b.lineAt = nil, -1
	}
	if env.Kind != acp.KindResponse && isReserved(env.Method) {
		b.agentReserved(msg, env)
		return
	}
	// session/update strips its own (agentNotification); a permission
	// request is checked whole (duplicate members) and stripped where it is
	// presented (presentParams).
	if env.Method != acp.MethodSessionUpdate && env.Method != acp.MethodRequestPermission {
		if msg, env = b.stripAgentMeta(msg, env); msg == nil {
			b.stats.dropped.Add(1)
			return
		}
	}
	if env.Kind != acp.KindNotification {
		// Anything that reaches a host another way (a response, a request
		// handed to another goroutine) must come after the notifications
		// the agent sent before it.
		b.flushPending()
	}
	switch env.Kind {
	case acp.KindResponse:
		b.agentResponse(msg, env)
	case acp.KindNotification:
		b.agentNotification(msg, &env)
	case acp.KindRequest:
		b.agentRequest(msg, env)
	}
}

// agentResponse restores the host's id and sends the response to it.
func (b *Bridge) agentResponse(msg []byte, env acp.Envelope) {
	key := acp.IDKey(env.ID.Bytes(msg))
	b.mu.Lock()
	c := b.calls[key]
	if c == nil && b.ownResponseLocked(key) {
		b.mu.Unlock()
		if e := env.Error.Bytes(msg); e != nil {
			b.log.Warn("the agent refused acpmux's request", "err", truncate(e, 200))
		}
		return
	}
	if c == nil {
		b.mu.Unlock()
		b.stats.dropped.Add(1)
		b.log.Warn("agent answered an unknown request id; dropped", "id", string(env.ID.Bytes(msg)))
		return
	}
	delete(b.calls, key)
	b.callDoneLocked()
	var waiters []initWaiter
	var newSession string
	result := env.Result.Bytes(msg)
	switch c.method {
	case acp.MethodInitialize:
		b.init.pending = false
		if result != nil {
			defer b.checkAgentVersion(result)
			b.init.result = append([]byte(nil), result...)
		}
		waiters, b.init.waiters = b.init.waiters, nil
	case acp.MethodSessionNew:
		if sid := acp.MemberString(result, "sessionId"); sid != "" {
			b.addSessionLocked(sid, c.cwd, c.host)
			defer b.log.Info("session created", "session", sid, "host", c.host.ID, "cwd", c.cwd) // after b.mu is released
			defer b.sessionStarted(sid, c.cwd)
			newSession = sid
		}
	case acp.MethodSessionPrompt:
		if s := b.sessions[c.session]; s != nil && s.turn == c.host {
			s.turn = nil
		}
	}
	b.mu.Unlock()
	if newSession != "" {
		// Before the host has the response: acpmux's own session/set_mode
		// reaches the agent before the host's first prompt.
		b.trackSessionModes(newSession, result)
	}
	c.host.mu.Lock()
	delete(c.host.inflight, c.hostKey)
	c.host.mu.Unlock()

	c.host.send(acp.WithID(msg, env.ID, c.origID))
	for _, w := range waiters {
		w.host.send(acp.WithID(msg, env.ID, w.id))
	}
}

// agentNotification fans a notification out to the hosts of its session.
// env is a pointer: the envelope is not copied for every line.
func (b *Bridge) agentNotification(msg []byte, env *acp.Envelope) {
	params := env.Params.Bytes(msg)
	if env.Method == acp.MethodCancelRequest {
		b.agentCancel(params)
		return
	}
	if env.Method == acp.MethodElicitationComplete {
		b.agentCompleted(params)
	}
	if env.Method == acp.MethodSessionUpdate && env.MetaNames { // no _meta: nothing to strip, no copy of env
		if msg, *env = b.stripAgentMeta(msg, *env); msg == nil {
			return
		}
	}
	// Parse located the session/update parts in its one pass.
	u := &env.Update
	sidRaw := u.SessionID.Bytes(msg)
	var update []byte
	if env.Method == acp.MethodSessionUpdate {
		update = u.Update.Bytes(msg)
	}
	b.mu.Lock()
	hosts := b.hosts
	if s := b.sessionByRaw(sidRaw); s != nil {
		hosts = s.hosts
		if update != nil {
			s.replay.appendUpdate(msg, u)
		}
	}
	b.mu.Unlock()
	if update != nil && b.opts.Watch != nil {
		sid, _ := acp.StringValue(sidRaw)
		b.opts.Watch(sid, update)
	}
	if update != nil && b.broker != nil {
		kind := u.Kind.Bytes(msg)
		if u.UpdateOther { // an escaped member name may still be sessionUpdate
			kind = acp.MemberBytes(update, "sessionUpdate")
		}
		// update may be a lent line (b.line): the broker gets a copy.
		switch followedUpdate(kind) {
		case followToolCall:
			sid, _ := acp.StringValue(sidRaw)
			b.broker.ToolCallUpdate(sid, bytes.Clone(update))
		case followMode:
			sid, _ := acp.StringValue(sidRaw)
			b.trackAgentMode(sid, bytes.Clone(update))
		}
	}
	for _, h := range hosts {
		b.enqueue(h, msg)
	}
}

// agentRequest routes an agent request: permission requests and the
// elicitation/create of a known session to the broker, everything else
// (fs/*, terminal/*, an elicitation without a known session, extensions)
// to the one host that owns the session.
func (b *Bridge) agentRequest(msg []byte, env acp.Envelope) {
	agentID := append([]byte(nil), env.ID.Bytes(msg)...)
	key := acp.IDKey(agentID)
	b.mu.Lock()
	if _, busy := b.agentCalls[key]; busy {
		b.mu.Unlock()
		b.log.Warn("agent reused the id of its own request still in flight; refused", "id", string(agentID), "method", env.Method)
		b.toAgent(errorMessage(nil, fmt.Errorf("%w: request id %s already in use", acp.ErrInvalidRequest, agentID)))
		return
	}
	occ := strconv.FormatInt(b.seq.Add(1), 10) + "/" + key
	b.agentCalls[key] = occ
	b.mu.Unlock()
	sid := acp.MemberString(env.Params.Bytes(msg), "sessionId")
	if env.Method == acp.MethodRequestPermission && b.broker != nil {
		if _, _, known := b.sessionHosts(sid); !known {
			// Answered here, on the read loop: a flood of them costs no
			// goroutine each (memory stays flat even when the log is slow).
			b.refuseUnknownSession(msg, env, agentID, occ, sid)
			return
		}
		b.permWG.Add(1)
		go func() {
			defer b.permWG.Done()
			b.askPermission(msg, env, agentID, occ, sid)
		}()
		return
	}
	if env.Method == acp.MethodElicitationCreate && b.broker != nil && sid != "" {
		if _, _, known := b.sessionHosts(sid); known {
			b.permWG.Add(1)
			go func() {
				defer b.permWG.Done()
				b.askQuestion(msg, env, agentID, occ, sid)
			}()
			return
		}
	}
	b.forwardToOwner(msg, env, agentID, sid)
}

// forwardToOwner sends an agent request to the session's owning host (the
// primary host when the session is unknown) under a fresh host id.
func (b *Bridge) forwardToOwner(msg []byte, env acp.Envelope, agentID []byte, sid string) {
	b.mu.Lock()
	h := b.primary
	if s := b.sessions[sid]; s != nil && s.owner != nil {
		h = s.owner
	}
	b.mu.Unlock()
	if h == nil || !h.sendRequest(msg, env, agentID, "") {
		b.replyAgentError(agentID, fmt.Errorf("%w: %s", acp.ErrNoHost, env.Method))
	}
}

// agentCancel handles the agent's $/cancel_request for one of its own
// requests: a permission request goes to the router; a request forwarded to
// a host is cancelled there under that host's id.
func (b *Bridge) agentCancel(params []byte) {
	rid := acp.MemberBytes(params, "requestId")
	if rid == nil {
		return
	}
	akey := acp.IDKey(rid)
	b.mu.Lock()
	occ, inFlight := b.agentCalls[akey]
	b.mu.Unlock()
	if !inFlight {
		return
	}
	if b.cancelAsked(occ) {
		return
	}
	b.mu.Lock()
	hosts := b.hosts
	b.mu.Unlock()
	for _, h := range hosts {
		h.mu.Lock()
		var hid string
		for k, oc := range h.outgoing {
			if acp.IDKey(oc.agentID) == akey && oc.decision == "" {
				hid = k
			}
		}
		h.mu.Unlock()
		if hid != "" {
			h.send(notification(acp.MethodCancelRequest, `{"requestId":`+idFromKey(hid)+`}`))
		}
	}
}

// agentExited answers every host request still waiting for the agent and
// closes every open confirmation.
func (b *Bridge) agentExited() {
	b.mu.Lock()
	if b.agentGone {
		b.mu.Unlock()
		return
	}
	b.agentGone = true
	calls := b.calls
	b.calls = map[string]*call{}
	waiters := b.init.waiters
	b.init.waiters = nil
	cause := b.agentFailure
	b.mu.Unlock()
	errExit := error(acp.ErrAgentExited)
	if cause != nil {
		errExit = fmt.Errorf("%w: %v", acp.ErrAgentExited, cause)
	}
	for _, c := range calls {
		b.replyError(c.host, c.origID, errExit)
	}
	for _, w := range waiters {
		b.replyError(w.host, w.id, errExit)
	}
	if b.broker != nil {
		b.broker.AgentExited()
	}
}

func (b *Bridge) setAgentFailure(err error) {
	b.mu.Lock()
	b.agentFailure = err
	b.mu.Unlock()
}

// completeCall forgets a host request that could not be sent.
func (b *Bridge) completeCall(bkey string) {
	b.mu.Lock()
	c := b.calls[bkey]
	delete(b.calls, bkey)
	b.callDoneLocked()
	b.mu.Unlock()
	if c != nil {
		c.host.mu.Lock()
		delete(c.host.inflight, c.hostKey)
		c.host.mu.Unlock()
	}
}

// replyError sends a JSON-RPC error response with id (null when nil) to h.
func (b *Bridge) replyError(h *Host, id []byte, err error) {
	h.send(errorMessage(id, err))
}

// replyAgentError answers an agent request with an error.
func (b *Bridge) replyAgentError(agentID []byte, err error) {
	b.answerAgent(agentID, errorMessage(agentID, err))
}

// answerAgent sends msg, the response to the agent's request agentID, and
// frees the id for reuse by the agent.
func (b *Bridge) answerAgent(agentID, msg []byte) {
	b.mu.Lock()
	delete(b.agentCalls, acp.IDKey(agentID))
	b.mu.Unlock()
	b.toAgent(msg)
}

// errorMessage encodes a JSON-RPC error response (JSON-RPC 2.0 §5).
func errorMessage(id []byte, err error) []byte {
	if id == nil {
		id = []byte("null")
	}
	e, _ := json.Marshal(acp.AsError(err))
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + string(e) + `}`)
}

// resultMessage builds a JSON-RPC success response from raw result bytes.
func resultMessage(id, result []byte) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + string(result) + `}`)
}

// notification builds a JSON-RPC notification from raw params bytes.
func notification(method, params string) []byte {
	m, _ := json.Marshal(method)
	return []byte(`{"jsonrpc":"2.0","method":` + string(m) + `,"params":` + params + `}`)
}

// idFromKey turns a key minted by Host.mintID back into its raw id.
func idFromKey(key string) string {
	if strings.HasPrefix(key, "n") {
		if _, err := strconv.ParseInt(key[1:], 10, 64); err == nil {
			return key[1:]
		}
	}
	q, _ := json.Marshal(strings.TrimPrefix(key, "s"))
	return string(q)
}

// truncate returns at most n bytes of b as a quoted string for logs.
func truncate(b []byte, n int) string {
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return strconv.Quote(string(b))
}
