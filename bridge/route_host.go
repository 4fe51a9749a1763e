package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/bridge/upstream"
)

// errHostClosed is the cause of a host that closed its connection
// normally: EOF, or a WebSocket close with status 1000 or 1001.
var errHostClosed = errors.New("host closed the connection")

// readHost reads host messages until the host disconnects.
func (b *Bridge) readHost(h *Host) {
	defer b.hostLeft(h)
	for {
		msg, err := h.conn.ReadMessage()
		if errors.Is(err, ErrLineTooLong) {
			b.log.Warn("host message too large; dropped", "host", h.ID, "err", err)
			b.replyError(h, nil, fmt.Errorf("%w: %v", acp.ErrMessageTooLarge, err))
			continue
		}
		if errors.Is(err, io.EOF) && b.isPrimary(h) {
			// A half close: the IDE sent everything and still reads the
			// answers, as it would from the agent directly. It leaves when
			// the bridge closes its hosts after the agent exits.
			b.primaryEOFOnce.Do(func() { close(b.primaryEOF) })
			<-h.gone
			return
		}
		if errors.Is(err, io.EOF) || errors.Is(err, errHostClosed) {
			h.disconnect(errHostClosed)
			return
		}
		if err != nil {
			b.log.Debug("host read failed", "host", h.ID, "err", err)
			h.disconnect(fmt.Errorf("host read: %w", err))
			return
		}
		b.stats.hostMsgs.Add(1)
		b.stats.hostBytes.Add(int64(len(msg)))
		b.fromHost(h, msg)
	}
}

// fromHost routes one message from a host.
func (b *Bridge) fromHost(h *Host, msg []byte) {
	if len(msg) > 0 && msg[0] == '[' {
		b.hostBatch(h, msg)
		return
	}
	env, err := acp.Parse(msg)
	if errors.Is(err, acp.ErrNotJSON) {
		b.replyError(h, nil, fmt.Errorf("%w: host message is not JSON", acp.ErrParse))
		return
	}
	if err == nil {
		err = env.CheckVersion(msg)
	}
	if err != nil {
		b.invalidHostMessage(h, msg, err)
		return
	}
	switch env.Kind {
	case acp.KindRequest:
		b.hostRequest(h, msg, env)
	case acp.KindNotification:
		b.hostNotification(h, msg, env)
	case acp.KindResponse:
		b.hostResponse(h, msg, env)
	}
}

// hostBatch answers a JSON-RPC batch: ACP does not use batches, so every
// element that is a request (or not an object) gets -32600 with a null id,
// notifications and responses are dropped, and an empty batch gets one
// -32600 (JSON-RPC 2.0 §6).
func (b *Bridge) hostBatch(h *Host, msg []byte) {
	var elems []json.RawMessage
	if err := json.Unmarshal(msg, &elems); err != nil {
		b.replyError(h, nil, fmt.Errorf("%w: host message is not JSON", acp.ErrParse))
		return
	}
	errNoBatch := fmt.Errorf("%w: batches are not supported by ACP", acp.ErrInvalidRequest)
	if len(elems) == 0 {
		b.replyError(h, nil, errNoBatch)
		return
	}
	for _, e := range elems {
		switch hostIntent(e) {
		case acp.KindNotification:
			b.log.Warn("host sent a notification inside a batch; dropped", "host", h.ID, "method", acp.MemberString(e, "method"))
		case acp.KindResponse:
			b.log.Warn("host sent a response inside a batch; dropped", "host", h.ID, "id", truncate(acp.MemberBytes(e, "id"), 64))
		default:
			b.replyError(h, nil, errNoBatch)
		}
	}
}

// hostRequest forwards a host request to the agent under a fresh bridge id,
// in steps: serve one naming a teammate's session (teammate_watch.go),
// note mode selections, serve session/attach itself, refuse what
// cannot go (admitLocked), answer a repeated initialize from the cache,
// start a prompt turn, register a session/load or session/resume, then
// echo the prompt to the session's other hosts and send the request.
func (b *Bridge) hostRequest(h *Host, msg []byte, env acp.Envelope) {
	params := env.Params.Bytes(msg)
	c := newCall(h, msg, env)
	if err := h.admitMethod(env.Method); err != nil { // host_person.go
		b.replyError(h, c.origID, err)
		return
	}
	if env.Method == acp.MethodInitialize {
		noteHostCapabilities(h, params)
	}
	if b.teammateSessionRequest(h, c.origID, env.Method, params) {
		return
	}
	if err := b.trackHostMode(h, env.Method, params); err != nil {
		b.replyError(h, c.origID, err)
		return
	}
	if env.Method == MethodSessionAttach {
		b.attach(h, c.origID, params)
		return
	}
	if isTeammateMethod(env.Method) {
		b.teammateRequest(h, c.origID, env.Method, params)
		return
	}
	bid, bkey := b.mintBridgeID()
	b.mu.Lock()
	if err := b.admitLocked(h, c); err != nil {
		b.mu.Unlock()
		b.replyError(h, errID(err, c.origID), err)
		return
	}
	if env.Method == acp.MethodInitialize {
		h.noteCapabilities(params)
	}
	if env.Method == acp.MethodInitialize && b.initCachedLocked(h, c.origID) {
		b.mu.Unlock()
		return
	}
	echo, echoTo, err := b.startTurnLocked(h, c, params)
	if err != nil {
		b.mu.Unlock()
		b.replyError(h, c.origID, err)
		return
	}
	if env.Method == acp.MethodSessionLoad || env.Method == acp.MethodSessionResume {
		// session/load replays the history before it answers: register the
		// session now so those updates reach this host.
		b.addSessionLocked(c.session, c.cwd, h)
		defer b.sessionStarted(c.session, c.cwd)
	}
	b.calls[bkey] = c
	h.mu.Lock()
	h.inflight[c.hostKey] = bkey
	h.mu.Unlock()
	b.mu.Unlock()

	for _, x := range echoTo {
		if x != h {
			for _, m := range echo {
				x.send(m)
			}
		}
	}
	b.forwardRequest(h, c, bid, bkey, msg, env)
}

// newCall returns the record of host request msg: the host's id, and the
// session id and working directory of the methods that name them.
func newCall(h *Host, msg []byte, env acp.Envelope) *call {
	origID := append([]byte(nil), env.ID.Bytes(msg)...)
	params := env.Params.Bytes(msg)
	c := &call{host: h, origID: origID, hostKey: acp.IDKey(origID), method: env.Method}
	switch env.Method {
	case acp.MethodSessionLoad, acp.MethodSessionResume, acp.MethodSessionPrompt:
		c.session = acp.MemberString(params, "sessionId")
	}
	switch env.Method {
	case acp.MethodSessionNew, acp.MethodSessionLoad, acp.MethodSessionResume:
		c.cwd = acp.MemberString(params, "cwd")
	}
	return c
}

// errDuplicateID marks admitLocked's refusal of an id already in flight:
// its error response has a null id (the id names another request).
type errDuplicateID struct{ error }

// Unwrap returns the wrapped error, for errors.Is.
func (e errDuplicateID) Unwrap() error { return e.error }

// errID returns the id an error response to c carries: null for a
// duplicate id, else the host's own.
func errID(err error, origID []byte) []byte {
	if _, dup := err.(errDuplicateID); dup {
		return nil
	}
	return origID
}

// admitLocked refuses a request whose id the host already has in flight
// (-32600) or that comes after the agent exited. b.mu is held.
func (b *Bridge) admitLocked(h *Host, c *call) error {
	if _, dup := h.inflightLocked(c.hostKey); dup {
		return errDuplicateID{fmt.Errorf("%w: request id %s already in use", acp.ErrInvalidRequest, c.origID)}
	}
	if b.agentGone {
		return acp.ErrAgentExited
	}
	return nil
}

// initCachedLocked answers an initialize from the agent's cached result,
// or queues it behind the first one still in flight; it reports whether it
// did either (false: this initialize goes to the agent). b.mu is held.
func (b *Bridge) initCachedLocked(h *Host, origID []byte) bool {
	if b.init.result != nil {
		h.send(resultMessage(origID, b.init.result))
		return true
	}
	if b.init.pending {
		b.init.waiters = append(b.init.waiters, initWaiter{h, origID})
		return true
	}
	b.init.pending = true
	return false
}

// startTurnLocked makes h the host of c's prompt turn, refusing a second
// host's prompt while one runs (ErrTurnInProgress). The prompt goes into
// the replay log and is returned as user_message_chunk updates for the
// other hosts (a late joiner sees what was asked). Other methods pass.
// b.mu is held.
func (b *Bridge) startTurnLocked(h *Host, c *call, params []byte) (echo [][]byte, echoTo []*Host, err error) {
	if c.method != acp.MethodSessionPrompt {
		return nil, nil, nil
	}
	s := b.sessions[c.session]
	if s == nil {
		return nil, nil, nil
	}
	if s.turn != nil && s.turn != h {
		return nil, nil, fmt.Errorf("%w: host %s is running a prompt turn of session %s", acp.ErrTurnInProgress, s.turn.ID, c.session)
	}
	s.turn = h
	echo = promptEcho(params)
	for _, m := range echo {
		s.replay.append(m, acp.Member(m, "params").Bytes(m), nil)
	}
	return echo, s.hosts, nil
}

// forwardRequest sends registered call c to the agent under bridge id bid
// (an initialize asks for protocol version 1); if the agent is gone, the
// host gets ErrAgentExited.
func (b *Bridge) forwardRequest(h *Host, c *call, bid []byte, bkey string, msg []byte, env acp.Envelope) {
	if env.Method == acp.MethodInitialize {
		asked := acp.MemberBytes(env.Params.Bytes(msg), "protocolVersion")
		var changed bool
		if msg, env, changed = initializeV1(msg, env); changed {
			b.log.Info("host asked for another ACP protocol version; asking the agent for v1", "host", h.ID, "asked", truncate(asked, 32))
		}
		msg, env = b.advertiseElicitation(msg, env)
	}
	if !b.toAgent(acp.WithID(msg, env.ID, bid)) {
		b.completeCall(bkey)
		b.replyError(h, c.origID, acp.ErrAgentExited)
	}
}

// hostNotification forwards a host notification to the agent, acting first
// on session/cancel and $/cancel_request.
func (b *Bridge) hostNotification(h *Host, msg []byte, env acp.Envelope) {
	params := env.Params.Bytes(msg)
	if isTeammateMethod(env.Method) {
		switch env.Method {
		case upstream.MethodWithdraw:
			b.teammateWithdraw(h, params)
		case upstream.MethodUpdate:
			b.teammateUpdate(h, params)
		}
		return
	}
	if !h.mayPrompt() && env.Method != acp.MethodCancelRequest {
		b.log.Warn("notification from a host whose person may not drive the agent; dropped", "host", h.ID, "person", h.personName(), "method", env.Method)
		return
	}
	if b.teammateSessionCancel(h, env.Method, params) {
		return
	}
	switch env.Method {
	case acp.MethodSessionCancel:
		sid := acp.MemberString(params, "sessionId")
		if !b.inSession(h, sid) {
			b.log.Warn("host cancelled a session it is not attached to; dropped", "host", h.ID, "session", sid)
			return
		}
		b.log.Info("session cancelled by host", "host", h.ID, "session", sid)
		b.cancelDecisions(sid, "cancelled by host "+h.ID)
	case acp.MethodCancelRequest:
		msg = b.translateHostCancel(h, msg, env)
		if msg == nil {
			return
		}
	}
	b.toAgent(msg)
}

// translateHostCancel rewrites the requestId of a host's $/cancel_request to
// the bridge id of that host's request; an id that is not in flight is
// dropped (nil).
func (b *Bridge) translateHostCancel(h *Host, msg []byte, env acp.Envelope) []byte {
	params := env.Params.Bytes(msg)
	rid := acp.Member(params, "requestId")
	if !rid.Present() {
		return nil
	}
	h.mu.Lock()
	bkey, ok := h.inflight[acp.IDKey(rid.Bytes(params))]
	h.mu.Unlock()
	if !ok {
		b.log.Debug("host cancelled a request that is not in flight; dropped", "host", h.ID)
		return nil
	}
	abs := acp.Span{Start: env.Params.Start + rid.Start, End: env.Params.Start + rid.End}
	return acp.WithID(msg, abs, []byte(bkey[1:]))
}

// invalidHostMessage handles a host message that is JSON but not valid
// JSON-RPC 2.0 (err says why, a missing or wrong jsonrpc member included).
// Only requests get responses: a request gets -32600 (with its id when the
// id is a string, number or null, else null), a notification is dropped,
// and a response is never answered: it counts as the host abstaining from
// the request it names (invalidHostResponse). Anything that is not an
// object gets -32600 with a null id (JSON-RPC 2.0 §5).
func (b *Bridge) invalidHostMessage(h *Host, msg []byte, err error) {
	b.stats.dropped.Add(1)
	switch hostIntent(msg) {
	case acp.KindRequest:
		id := acp.MemberBytes(msg, "id")
		switch id[0] {
		case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			id = nil
		}
		b.log.Warn("host sent an invalid request; answered with -32600", "host", h.ID, "err", err)
		b.replyError(h, id, err)
	case acp.KindNotification:
		b.log.Warn("host sent an invalid notification; dropped", "host", h.ID, "err", err)
	case acp.KindResponse:
		b.invalidHostResponse(h, msg, err)
	default:
		b.replyError(h, nil, err)
	}
}

// hostIntent tells what a host message that is JSON was meant to be: an
// object with a method member is a request (with an id member) or a
// notification, any other object a response; 0 for a non-object.
func hostIntent(msg []byte) acp.Kind {
	var p [2]acp.Span
	if isObj, _ := acp.Members(msg, intentMembers, p[:]); !isObj {
		return 0
	}
	switch {
	case p[0].Present() && p[1].Present():
		return acp.KindRequest
	case p[0].Present():
		return acp.KindNotification
	}
	return acp.KindResponse
}

var intentMembers = []string{"method", "id"}

// invalidHostResponse handles an invalid response from a host: it is not
// an answer. When it names a request acpmux sent the host, the host
// abstains from it: a permission request stays open for the other hosts;
// any other agent request is answered to the agent with -32093 (the host
// that was to serve it did not). Nothing goes back to the host.
func (b *Bridge) invalidHostResponse(h *Host, msg []byte, err error) {
	rawID := acp.MemberBytes(msg, "id")
	var oc *outCall
	if rawID != nil {
		key := acp.IDKey(rawID)
		h.mu.Lock()
		oc = h.outgoing[key]
		delete(h.outgoing, key)
		h.mu.Unlock()
	}
	if oc == nil {
		b.log.Warn("host sent an invalid response to no request in flight; dropped", "host", h.ID, "id", truncate(rawID, 64), "err", err)
		return
	}
	b.log.Warn("host sent an invalid response; it counts as the host abstaining", "host", h.ID, "method", oc.method, "id", truncate(rawID, 64), "err", err)
	if oc.decision != "" {
		b.broker.Abstain(oc.decision, h.ID, "invalid response: "+err.Error())
		return
	}
	b.replyAgentError(oc.agentID, fmt.Errorf("%w: host %s sent an invalid response to %s", acp.ErrNoHost, h.ID, oc.method))
}

// hostResponse routes a host's response to an agent request.
func (b *Bridge) hostResponse(h *Host, msg []byte, env acp.Envelope) {
	key := acp.IDKey(env.ID.Bytes(msg))
	h.mu.Lock()
	oc := h.outgoing[key]
	delete(h.outgoing, key)
	h.mu.Unlock()
	if oc == nil {
		switch {
		case h.minted(key):
			// A request acpmux sent and no longer waits for: withdrawn
			// ($/cancel_request crossed the answer; after session/cancel ACP
			// has the client answer a pending permission request
			// "cancelled") or answered before. Not an error of the host.
			b.log.Debug("host answered a request acpmux no longer waits for (withdrawn or answered); dropped", "host", h.ID, "id", string(env.ID.Bytes(msg)))
		case env.Error.Present():
			b.stats.dropped.Add(1)
			b.log.Debug("host answered an unknown request with an error; dropped", "host", h.ID, "id", string(env.ID.Bytes(msg)))
		default:
			b.stats.dropped.Add(1)
			b.log.Warn("host answered a request it was not sent; dropped", "host", h.ID, "id", string(env.ID.Bytes(msg)))
		}
		return
	}
	if oc.decision != "" {
		b.hostAnswered(h, oc.decision, env.Result.Bytes(msg), env.Error.Bytes(msg))
		return
	}
	if oc.relay != nil {
		oc.relay.host.send(acp.WithID(msg, env.ID, oc.relay.id))
		return
	}
	b.answerAgent(oc.agentID, acp.WithID(msg, env.ID, oc.agentID))
}

// hostLeft cleans up after a host disconnects: its in-flight requests stay
// with the agent (their responses are dropped), its presented permission
// requests count as abstentions.
func (b *Bridge) hostLeft(h *Host) {
	b.mu.Lock()
	for i, x := range b.hosts {
		if x == h {
			b.hosts = append(b.hosts[:i:i], b.hosts[i+1:]...)
			break
		}
	}
	for _, s := range b.sessions {
		s.removeHost(h)
	}
	b.teammateLeftLocked(h)
	b.mu.Unlock()
	h.mu.Lock()
	outgoing := h.outgoing
	h.outgoing = map[string]*outCall{}
	h.mu.Unlock()
	for _, oc := range outgoing {
		if oc.relay != nil {
			b.replyError(oc.relay.host, oc.relay.id, fmt.Errorf("%w: teammate %s disconnected before answering %s", acp.ErrNoHost, h.teammate, oc.method))
		} else if oc.decision != "" {
			b.broker.Abstain(oc.decision, h.ID, "host disconnected")
		} else {
			b.replyAgentError(oc.agentID, fmt.Errorf("%w: host %s disconnected before answering %s", acp.ErrNoHost, h.ID, oc.method))
		}
	}
	b.log.Info("host left", "host", h.ID, "cause", h.Err())
}

// inflightLocked reports whether the host has a request with this id key in
// flight. b.mu is held; it takes h.mu.
func (h *Host) inflightLocked(key string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	bk, ok := h.inflight[key]
	return bk, ok
}

// promptEcho turns the content blocks of a session/prompt into
// user_message_chunk session updates, so that the other hosts of the session
// see what one host asked (each block's bytes are kept as sent).
func promptEcho(params []byte) [][]byte {
	sid := acp.MemberBytes(params, "sessionId")
	var blocks []json.RawMessage
	if sid == nil || json.Unmarshal(acp.MemberBytes(params, "prompt"), &blocks) != nil {
		return nil
	}
	out := make([][]byte, 0, len(blocks))
	for _, blk := range blocks {
		out = append(out, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`+string(sid)+
			`,"update":{"sessionUpdate":"user_message_chunk","content":`+string(blk)+`}}}`))
	}
	return out
}

// inSession reports whether h is one of the hosts of session sid (an
// unknown session counts as h's: the agent decides what it means).
func (b *Bridge) inSession(h *Host, sid string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sessions[sid]
	if s == nil {
		return true
	}
	for _, x := range s.hosts {
		if x == h {
			return true
		}
	}
	return false
}
