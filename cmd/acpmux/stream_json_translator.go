package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/streamjson"
)

// translatorOptions configure a translator.
type translatorOptions struct {
	Dialect        streamjson.Dialect
	Partial        bool   // --include-partial-messages
	NoPrompts      bool   // --permission-prompts none
	PermissionMode string // --permission-mode / --approval-mode
	Model          string // --model
	Cwd            string
	MaxLineBytes   int
	Grace          time.Duration
	PlanAtStart    bool // the gate starts in plan mode
}

// ReasonNoPrompts is the reason logged for a permission request denied at
// once because of --permission-prompts none.
const ReasonNoPrompts = "acpmux:no_prompts"

// translator is the stream-json host of "acpmux stream-json": the owning
// ACP client of the relay on one side (an in-memory NDJSON connection),
// stream-json on the process's stdin and stdout on the other. It sends
// initialize, session/new, one session/prompt per user message (one turn at
// a time, in order), session/cancel on interrupt; it maps session/update
// with a streamjson.Mapper and permission requests to can_use_tool control
// requests, and answers them from the script's validated verdict.
type translator struct {
	opt    translatorOptions
	log    *slog.Logger
	broker *confirm.Broker

	// The ACP side: what the bridge writes (ar) and what it reads (aw).
	ar        *bufio.Reader
	aw        *io.PipeWriter
	hostR     *io.PipeReader
	hostW     *io.PipeWriter
	outq      sendQueue
	nextID    atomic.Int64
	cmu       sync.Mutex // guards calls
	calls     map[int64]func(result, errObj []byte)
	readerEnd chan struct{} // closed when the ACP reader has stopped

	// The script side.
	omu sync.Mutex // guards ow, enc
	ow  *bufio.Writer
	enc *streamjson.Encoder

	mu       sync.Mutex // guards m and the session facts below
	m        *streamjson.Mapper
	sid      string
	modes    []string // mode ids the agent offers
	models   bool     // the agent offers session/set_model
	modelCO  string   // the agent's model config option id, if any
	defModel string
	early    [][]byte // session/update objects that came before the mapper

	conf      *streamjson.Confirmations
	pmu       sync.Mutex             // guards byHost, rawID, questions
	byHost    map[string]string      // ACP id key of a presented request → request_id
	rawID     map[string][]byte      // request_id → ACP id of the presented request
	questions map[string]*sjQuestion // request_id → pending question (stream_json_question.go)

	qmu      sync.Mutex // guards queue, running, eof
	queue    [][]streamjson.PromptBlock
	running  bool
	eof      bool
	wake     chan struct{}
	turnsEnd chan struct{}

	stdinEOF    atomic.Bool
	setupFailed atomic.Bool
}

func newTranslator(o translatorOptions, broker *confirm.Broker, log *slog.Logger, stdout io.Writer) *translator {
	t := &translator{opt: o, log: log, broker: broker, calls: map[int64]func([]byte, []byte){},
		readerEnd: make(chan struct{}), conf: streamjson.NewConfirmations(), byHost: map[string]string{},
		rawID: map[string][]byte{}, wake: make(chan struct{}, 1), turnsEnd: make(chan struct{})}
	t.ow = bufio.NewWriterSize(stdout, 256<<10)
	t.enc = streamjson.NewEncoder(t.ow)
	var ar *io.PipeReader
	ar, t.hostW = io.Pipe()   // bridge → translator
	t.hostR, t.aw = io.Pipe() // translator → bridge
	t.ar = bufio.NewReaderSize(ar, 256<<10)
	t.outq.init()
	go t.writeACP()
	go t.readACP()
	return t
}

// hostConn is the bridge's end of the in-memory connection.
func (t *translator) hostConn() bridge.Conn {
	return bridge.NewNDJSONConn(t.hostR, t.hostW, closerFunc(func() error {
		t.hostR.Close()
		return t.hostW.Close()
	}), t.opt.MaxLineBytes)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// finish waits for the ACP reader (the last result written) and returns
// the exit status: 0 after stdin EOF, 1 when the session could not be
// started, else the agent's status.
func (t *translator) finish(code int) int {
	t.aw.Close()
	<-t.readerEnd
	t.flushOut()
	switch {
	case t.setupFailed.Load():
		return max(code, 1)
	case t.stdinEOF.Load():
		return 0
	}
	return code
}

// sendQueue is an unbounded FIFO of ACP messages to the bridge, so that no
// goroutine of the translator ever blocks on the bridge.
type sendQueue struct {
	mu     sync.Mutex
	msgs   [][]byte
	closed bool
	ready  chan struct{}
}

func (q *sendQueue) init() { q.ready = make(chan struct{}, 1) }

func (q *sendQueue) push(m []byte) {
	q.mu.Lock()
	if !q.closed {
		q.msgs = append(q.msgs, m)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *sendQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// writeACP writes queued messages to the bridge until the queue is closed
// and drained, then closes the connection (the host leaves).
func (t *translator) writeACP() {
	w := bufio.NewWriterSize(t.aw, 64<<10)
	defer t.aw.Close()
	for range t.outq.ready {
		t.outq.mu.Lock()
		msgs, closed := t.outq.msgs, t.outq.closed
		t.outq.msgs = nil
		t.outq.mu.Unlock()
		for _, m := range msgs {
			w.Write(m)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil || closed {
			return
		}
	}
}

// call sends an ACP request; cb gets its result or error object on the
// ACP reader goroutine (an error when the connection ends first).
func (t *translator) call(method string, params any, cb func(result, errObj []byte)) {
	id := t.nextID.Add(1)
	p, err := json.Marshal(params)
	if err != nil {
		cb(nil, errorObject(acp.ErrInternal.Code, err.Error()))
		return
	}
	t.cmu.Lock()
	if t.calls == nil {
		t.cmu.Unlock()
		cb(nil, errorObject(acp.ErrAgentExited.Code, "the agent connection is closed"))
		return
	}
	t.calls[id] = cb
	t.cmu.Unlock()
	m, _ := json.Marshal(method)
	t.outq.push([]byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":` + string(m) + `,"params":` + string(p) + `}`))
}

// callSync is call, waiting for the answer.
func (t *translator) callSync(method string, params any) ([]byte, error) {
	type answer struct{ res, err []byte }
	ch := make(chan answer, 1)
	t.call(method, params, func(res, errObj []byte) { ch <- answer{res, errObj} })
	a := <-ch
	if a.err != nil {
		return nil, fmt.Errorf("%s: %s", method, errorText(a.err))
	}
	return a.res, nil
}

func (t *translator) notify(method string, params any) {
	p, _ := json.Marshal(params)
	m, _ := json.Marshal(method)
	t.outq.push([]byte(`{"jsonrpc":"2.0","method":` + string(m) + `,"params":` + string(p) + `}`))
}

// reply answers the bridge's request id (raw JSON) with result.
func (t *translator) reply(id []byte, result any) {
	r, _ := json.Marshal(result)
	t.outq.push([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + string(r) + `}`))
}

func (t *translator) replyError(id []byte, code int64, msg string) {
	t.outq.push([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + string(errorObject(code, msg)) + `}`))
}

func errorObject(code int64, msg string) []byte {
	b, _ := json.Marshal(struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	return b
}

func errorText(errObj []byte) string {
	if m := acp.MemberString(errObj, "message"); m != "" {
		return m
	}
	return string(errObj)
}

// emit writes stream-json messages to stdout (buffered; see flushOut).
func (t *translator) emit(msgs ...streamjson.Message) {
	if len(msgs) == 0 {
		return
	}
	t.omu.Lock()
	defer t.omu.Unlock()
	for _, m := range msgs {
		if err := t.enc.Encode(m); err != nil {
			t.log.Warn("stream-json: cannot write a message", "type", m.MessageType(), "err", err)
		}
	}
}

func (t *translator) flushOut() {
	t.omu.Lock()
	defer t.omu.Unlock()
	t.ow.Flush()
}

// readACP reads what the bridge sends this host until the connection
// closes; stdout is flushed whenever no more input is waiting. At the end
// every pending call fails.
func (t *translator) readACP() {
	defer close(t.readerEnd)
	defer func() {
		t.cmu.Lock()
		calls := t.calls
		t.calls = nil
		t.cmu.Unlock()
		for _, cb := range calls {
			cb(nil, errorObject(acp.ErrAgentExited.Code, "the agent exited"))
		}
		t.outq.close()
	}()
	var long []byte
	for {
		frag, err := t.ar.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, frag...)
			continue
		}
		line := frag
		if long != nil {
			line, long = append(long, frag...), nil
		}
		line = trimNewline(line)
		if len(line) > 0 {
			t.fromACP(line)
		}
		if err != nil {
			return
		}
		if t.ar.Buffered() == 0 {
			t.flushOut()
		}
	}
}

// fromACP handles one message from the bridge.
func (t *translator) fromACP(line []byte) {
	env, err := acp.Parse(line)
	if err != nil {
		t.log.Warn("stream-json: unreadable message from the relay", "err", err)
		return
	}
	switch env.Kind {
	case acp.KindResponse:
		id, err := strconv.ParseInt(string(env.ID.Bytes(line)), 10, 64)
		t.cmu.Lock()
		cb := t.calls[id]
		delete(t.calls, id)
		t.cmu.Unlock()
		if err != nil || cb == nil {
			t.log.Debug("stream-json: response to no request", "id", string(env.ID.Bytes(line)))
			return
		}
		// The line is in the reader's buffer: callbacks may keep what they get.
		cb(clone(env.Result.Bytes(line)), clone(env.Error.Bytes(line)))
	case acp.KindNotification:
		t.notification(line, env)
	case acp.KindRequest:
		id := append([]byte(nil), env.ID.Bytes(line)...)
		switch env.Method {
		case acp.MethodRequestPermission:
			t.permission(id, env.Params.Bytes(line))
		case acp.MethodElicitationCreate:
			t.elicitation(id, clone(env.Params.Bytes(line)))
		default:
			t.replyError(id, acp.ErrMethodNotFound.Code, "acpmux stream-json does not serve "+env.Method)
		}
	}
}

func (t *translator) notification(line []byte, env acp.Envelope) {
	params := env.Params.Bytes(line)
	switch env.Method {
	case acp.MethodSessionUpdate:
		update := env.Update.Update.Bytes(line)
		t.mu.Lock()
		if t.m == nil {
			t.early = append(t.early, append([]byte(nil), update...))
			t.mu.Unlock()
			return
		}
		msgs, err := t.m.Update(update)
		if err == nil {
			t.emit(msgs...)
		}
		t.mu.Unlock()
		if err != nil {
			t.log.Warn("stream-json: session/update not shown", "err", err)
		}
	case acp.MethodCancelRequest:
		key := acp.IDKey(acp.MemberBytes(params, "requestId"))
		t.pmu.Lock()
		reqID := t.byHost[key]
		t.pmu.Unlock()
		t.withdraw(reqID)
	case bridge.MethodPermissionResolved:
		t.withdraw(acp.MemberString(params, "decisionId"))
	case bridge.MethodTurnCancelled:
		t.log.Info("stream-json: acpmux cancelled the prompt turn", "reason", acp.MemberString(params, "reason"))
	default:
		t.log.Debug("stream-json: notification ignored", "method", env.Method)
	}
}

// forget drops the ACP id of request_id and returns it.
func (t *translator) forget(reqID string) []byte {
	t.pmu.Lock()
	defer t.pmu.Unlock()
	id := t.rawID[reqID]
	delete(t.rawID, reqID)
	delete(t.byHost, acp.IDKey(id))
	return id
}

// withdraw tells the script that can_use_tool reqID is withdrawn (another
// host answered, the agent cancelled, it timed out).
func (t *translator) withdraw(reqID string) {
	if reqID == "" || t.withdrawQuestion(reqID) {
		return
	}
	c, ok := t.conf.Withdraw(reqID)
	t.forget(reqID)
	if ok {
		t.log.Info("stream-json: can_use_tool withdrawn", "request_id", reqID)
		t.emit(c)
	}
}

// acpmuxMeta is the _meta.acpmux acpmux adds to a presented permission
// request (docs/protocol.md).
type acpmuxMeta struct {
	DecisionID string   `json:"decisionId"`
	Warnings   []string `json:"warnings"`
	OneOff     bool     `json:"oneOff"`
}

// permission handles a session/request_permission presented to this host.
func (t *translator) permission(id, params []byte) {
	var meta acpmuxMeta
	if raw := acp.MemberBytes(acp.MemberBytes(params, "_meta"), "acpmux"); len(raw) > 0 {
		json.Unmarshal(raw, &meta)
	}
	reqID := meta.DecisionID
	if reqID == "" {
		reqID = "acp-" + acp.IDKey(id)
	}
	a, err := streamjson.NewPermissionAsk(reqID, params, meta.Warnings, meta.OneOff, t.opt.Dialect)
	if err != nil {
		t.replyError(id, acp.ErrInvalidParams.Code, err.Error())
		return
	}
	if t.opt.NoPrompts {
		t.mu.Lock()
		t.emit(t.m.Permission(a)...)
		t.m.Denied(a)
		sid := t.sid
		t.mu.Unlock()
		// Answered in the broker as acpmux:no_prompts, so the journal and
		// the API say why; the broker answers the agent and withdraws this
		// host's copy. Without a decision id or reject option, this host
		// answers itself.
		if opt := rejectOptionID(a); opt != "" && meta.DecisionID != "" && t.broker != nil {
			if _, _, err := t.broker.Answer(context.Background(), sid, meta.DecisionID, ReasonNoPrompts, confirm.Answer{OptionID: opt}); err == nil {
				t.log.Info("stream-json: permission prompt denied at once (--permission-prompts none)", "reason", ReasonNoPrompts,
					"decision", reqID, "toolCallId", a.ToolCallID, "title", a.Title)
				return
			}
		}
		t.reply(id, rejectOutcome(a))
		t.log.Info("stream-json: permission prompt denied at once (--permission-prompts none)", "reason", ReasonNoPrompts,
			"decision", reqID, "toolCallId", a.ToolCallID, "title", a.Title)
		return
	}
	t.pmu.Lock()
	t.byHost[acp.IDKey(id)] = reqID
	t.rawID[reqID] = id
	t.pmu.Unlock()
	cr, err := t.conf.Ask(a)
	if err != nil {
		t.forget(reqID)
		t.log.Warn("stream-json: permission request not shown; rejected", "err", err)
		t.reply(id, rejectOutcome(a))
		return
	}
	t.mu.Lock()
	t.emit(t.m.Permission(a)...)
	t.emit(cr)
	t.mu.Unlock()
}

// rejectOutcome selects a's reject_once option, else cancels: never an
// approval.
// rejectOptionID is the first offered reject_once option of a, or "".
func rejectOptionID(a streamjson.PermissionAsk) string {
	for _, o := range a.Options {
		if o.Kind == acp.RejectOnce {
			return o.OptionID
		}
	}
	return ""
}

func rejectOutcome(a streamjson.PermissionAsk) acp.RequestPermissionResponse {
	for _, o := range a.Options {
		if o.Kind == acp.RejectOnce {
			return streamjson.SelectedOutcome(streamjson.Verdict{OptionID: o.OptionID, Kind: o.Kind})
		}
	}
	return streamjson.CancelledOutcome()
}

// answer handles the script's control_response to a can_use_tool.
func (t *translator) answer(r streamjson.ResponseBody) {
	if t.answerQuestion(r) {
		return
	}
	a, v, err := t.conf.Answer(r)
	if errors.Is(err, streamjson.ErrUnknownRequest) {
		t.log.Debug("stream-json: answer to no pending can_use_tool; ignored", "request_id", r.RequestID)
		return
	}
	id := t.forget(a.RequestID)
	if id == nil {
		return
	}
	if err != nil {
		msg := err.Error()
		if errors.Is(err, streamjson.ErrStaleApproval) {
			msg = streamjson.StaleApprovalMessage
		}
		t.log.Warn("stream-json: can_use_tool answer refused; the request is rejected", "request_id", a.RequestID, "err", err, "message", msg)
		t.mu.Lock()
		t.m.Denied(a)
		t.mu.Unlock()
		t.reply(id, rejectOutcome(a))
		return
	}
	if v.Kind == acp.RejectOnce || v.Kind == acp.RejectAlways {
		t.mu.Lock()
		t.m.Denied(a)
		t.mu.Unlock()
		t.log.Info("stream-json: the script denied the tool call", "request_id", a.RequestID, "toolCallId", a.ToolCallID, "message", v.Message, "interrupt", v.Interrupt)
	}
	t.reply(id, streamjson.SelectedOutcome(v))
	if v.Interrupt {
		t.interrupt("")
	}
}

// interrupt cancels the running turn: session/cancel, then every pending
// can_use_tool is answered cancelled and withdrawn.
//
// session/cancel goes first, so that the relay closes the session's open
// decisions as cancelled (ACP "Prompt Turn", Cancellation); the cancelled
// answers that follow are then late and ignored.
//
// The script's lines (each control_cancel_request, then the interrupt's
// own success response when requestID is not "") are written before the
// session/cancel, so they always come before the turn's result.
func (t *translator) interrupt(requestID string) {
	t.mu.Lock()
	sid := t.sid
	t.mu.Unlock()
	pending := t.conf.Interrupt()
	t.mu.Lock()
	for _, a := range pending {
		t.m.Cancelled(a)
	}
	t.mu.Unlock()
	for _, a := range pending {
		t.emit(&streamjson.ControlCancelRequest{RequestID: a.RequestID})
	}
	t.interruptQuestions()
	if requestID != "" {
		t.success(requestID)
	}
	t.notify(acp.MethodSessionCancel, map[string]string{"sessionId": sid})
	for _, a := range pending {
		if id := t.forget(a.RequestID); id != nil {
			t.reply(id, streamjson.CancelledOutcome())
		}
	}
}

// run starts the session, then reads the script until stdin ends.
func (t *translator) run(stdin io.Reader) {
	defer t.outq.close()
	if err := t.setup(); err != nil {
		t.setupFailed.Store(true)
		t.log.Error("stream-json: could not start an ACP session with the agent", "err", err)
		return
	}
	go t.turns()
	dec := streamjson.NewDecoder(stdin, streamjson.DecoderOptions{MaxLineBytes: t.opt.MaxLineBytes, Logger: t.log})
	for {
		msg, err := dec.Decode()
		var le *streamjson.LineError
		if errors.As(err, &le) {
			t.log.Warn(le.Error())
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.log.Warn("stream-json: stdin read failed", "err", err)
			}
			break
		}
		t.script(msg)
		t.flushOut()
	}
	t.endInput()
}

// endInput handles stdin EOF: queued prompts are dropped, the running
// turn is cancelled and given the grace period to end.
func (t *translator) endInput() {
	t.stdinEOF.Store(true)
	t.qmu.Lock()
	t.eof = true
	dropped, running := len(t.queue), t.running
	t.queue = nil
	t.qmu.Unlock()
	if dropped > 0 {
		t.log.Info("stream-json: stdin closed; queued user messages dropped", "count", dropped)
	}
	select {
	case t.wake <- struct{}{}:
	default:
	}
	if running {
		t.log.Info("stream-json: stdin closed; cancelling the running turn")
		t.interrupt("")
	}
	select {
	case <-t.turnsEnd:
	case <-time.After(t.opt.Grace):
		t.log.Warn("stream-json: the turn did not end within the grace period; stopping the agent", "grace", t.opt.Grace)
	}
}

// setup sends initialize and session/new and applies --permission-mode and
// --model.
func (t *translator) setup() error {
	_, err := t.callSync(acp.MethodInitialize, map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
			// Questions become control_request elicitation (stream_json_question.go).
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
		},
		"clientInfo": map[string]string{"name": "acpmux-stream-json", "version": version},
	})
	if err != nil {
		return err
	}
	res, err := t.callSync(acp.MethodSessionNew, map[string]any{"cwd": t.opt.Cwd, "mcpServers": []any{}})
	if err != nil {
		return err
	}
	var sn struct {
		SessionID string `json:"sessionId"`
		Modes     *struct {
			CurrentModeID  string `json:"currentModeId"`
			AvailableModes []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
		Models *struct {
			CurrentModelID  string `json:"currentModelId"`
			AvailableModels []struct {
				ModelID     string `json:"modelId"`
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"availableModels"`
		} `json:"models"`
		ConfigOptions []struct {
			ID           string          `json:"id"`
			Category     string          `json:"category"`
			CurrentValue json.RawMessage `json:"currentValue"`
			Options      []struct {
				Value       string `json:"value"`
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"options"`
		} `json:"configOptions"`
	}
	if err := json.Unmarshal(res, &sn); err != nil || sn.SessionID == "" {
		return fmt.Errorf("session/new: result without a sessionId: %s", res)
	}
	info := streamjson.SessionInfo{SessionID: sn.SessionID, Cwd: t.opt.Cwd, PermissionMode: "default", Version: version}
	t.mu.Lock()
	t.sid = sn.SessionID
	t.mu.Unlock()
	if sn.Modes != nil {
		if sn.Modes.CurrentModeID != "" {
			info.PermissionMode = sn.Modes.CurrentModeID
		}
		for _, m := range sn.Modes.AvailableModes {
			t.modes = append(t.modes, m.ID)
		}
	}
	if sn.Models != nil && len(sn.Models.AvailableModels) > 0 {
		t.models, t.defModel, info.Model = true, sn.Models.CurrentModelID, sn.Models.CurrentModelID
		for _, m := range sn.Models.AvailableModels {
			info.Models = append(info.Models, streamjson.ModelInfo{Value: m.ModelID, DisplayName: m.Name, Description: m.Description})
		}
	} else {
		for _, co := range sn.ConfigOptions {
			if co.ID == "model" || co.Category == "model" {
				t.modelCO = co.ID
				json.Unmarshal(co.CurrentValue, &t.defModel)
				info.Model = t.defModel
				for _, o := range co.Options {
					info.Models = append(info.Models, streamjson.ModelInfo{Value: o.Value, DisplayName: o.Name, Description: o.Description})
				}
				break
			}
		}
	}
	if t.opt.PlanAtStart {
		info.PermissionMode = "plan"
	}
	if pm := t.opt.PermissionMode; pm != "" && !strings.EqualFold(pm, "plan") && !strings.EqualFold(pm, "default") {
		if t.hasMode(pm) {
			if _, err := t.callSync(acp.MethodSessionSetMode, map[string]string{"sessionId": t.sid, "modeId": pm}); err != nil {
				t.log.Warn("stream-json: --permission-mode not applied", "mode", pm, "err", err)
			} else {
				info.PermissionMode = pm
			}
		} else {
			t.log.Warn("stream-json: --permission-mode names no mode of the agent; ignored", "mode", pm, "modes", t.modes)
		}
	}
	if t.opt.Model != "" && t.opt.Model != "default" {
		if err := t.setModelSync(t.opt.Model); err != nil {
			t.log.Warn("stream-json: --model not applied", "model", t.opt.Model, "err", err)
		} else {
			info.Model = t.opt.Model
		}
	}
	t.mu.Lock()
	t.m = streamjson.NewMapper(streamjson.MapperOptions{Dialect: t.opt.Dialect, Session: info, IncludePartialMessages: t.opt.Partial})
	for _, u := range t.early {
		msgs, err := t.m.Update(u)
		if err != nil {
			t.log.Warn("stream-json: session/update not shown", "err", err)
		}
		t.emit(msgs...)
	}
	t.early = nil
	t.mu.Unlock()
	t.log.Info("stream-json: session started", "session", t.sid, "dialect", t.opt.Dialect)
	return nil
}

func (t *translator) hasMode(id string) bool {
	for _, m := range t.modes {
		if m == id {
			return true
		}
	}
	return false
}

// modelRequest returns the ACP request that selects model.
func (t *translator) modelRequest(model string) (string, any, error) {
	if model == "" || model == "default" {
		model = t.defModel
	}
	switch {
	case t.models:
		return "session/set_model", map[string]string{"sessionId": t.sid, "modelId": model}, nil
	case t.modelCO != "":
		return bridge.MethodSessionSetConfigOption, map[string]string{"sessionId": t.sid, "configId": t.modelCO, "value": model}, nil
	}
	return "", nil, errors.New("the agent offers no model option")
}

func (t *translator) setModelSync(model string) error {
	method, params, err := t.modelRequest(model)
	if err != nil {
		return err
	}
	_, err = t.callSync(method, params)
	return err
}

// script handles one message from the script.
func (t *translator) script(msg streamjson.Message) {
	switch m := msg.(type) {
	case *streamjson.User:
		p, err := streamjson.Prompt(m)
		if err != nil {
			t.log.Warn("stream-json: user message refused", "err", err)
			return
		}
		t.enqueue(p)
	case *streamjson.ControlRequest:
		t.control(m)
	case *streamjson.ControlResponse:
		t.answer(m.Response)
	case *streamjson.KeepAlive, *streamjson.Unknown:
	default:
		t.log.Debug("stream-json: message from the script ignored", "type", msg.MessageType())
	}
}

// control answers a control request of the script.
func (t *translator) control(c *streamjson.ControlRequest) {
	switch r := c.Request.(type) {
	case *streamjson.InitializeRequest:
		t.mu.Lock()
		resp, err := streamjson.SuccessResponse(c.RequestID, t.m.InitializeResponse())
		t.mu.Unlock()
		if err != nil {
			t.emit(streamjson.ErrorResponse(c.RequestID, err.Error()))
			return
		}
		t.emit(resp)
	case *streamjson.InterruptRequest:
		t.interrupt(c.RequestID)
	case *streamjson.SetPermissionModeRequest:
		t.setPermissionMode(c.RequestID, r.Mode)
	case *streamjson.SetModelRequest:
		model := ""
		if r.Model != nil {
			model = *r.Model
		}
		method, params, err := t.modelRequest(model)
		if err != nil {
			t.emit(streamjson.ErrorResponse(c.RequestID, "set_model: "+err.Error()))
			return
		}
		t.call(method, params, t.controlAnswer(c.RequestID))
	default:
		t.emit(streamjson.ErrorResponse(c.RequestID, fmt.Sprintf("unsupported control request subtype %q", c.Request.Subtype())))
	}
}

func (t *translator) success(reqID string) {
	resp, _ := streamjson.SuccessResponse(reqID, nil)
	t.emit(resp)
}

// controlAnswer returns a callback answering control request reqID from
// an ACP response.
func (t *translator) controlAnswer(reqID string) func(result, errObj []byte) {
	return func(_, errObj []byte) {
		if errObj != nil {
			t.emit(streamjson.ErrorResponse(reqID, errorText(errObj)))
		} else {
			t.success(reqID)
		}
		t.flushOut()
	}
}

// setPermissionMode handles set_permission_mode: plan and default switch
// acpmux's gate (refused when --lock-mode keeps it) and, when the agent
// offers a mode of that id, the agent's mode too; another mode the agent
// offers is selected with session/set_mode; anything else is an error.
func (t *translator) setPermissionMode(reqID, mode string) {
	gm := ""
	switch {
	case strings.EqualFold(mode, "plan"):
		gm = string(gate.ModePlan)
	case mode == "default":
		gm = string(gate.ModeDefault)
	}
	if gm != "" {
		if _, err := t.broker.SetMode(t.sid, gate.Mode(gm), "stream-json host set_permission_mode "+mode); err != nil {
			t.emit(streamjson.ErrorResponse(reqID, "set_permission_mode "+mode+": "+err.Error()))
			return
		}
		if t.hasMode(mode) {
			t.call(acp.MethodSessionSetMode, map[string]string{"sessionId": t.sid, "modeId": mode}, func(_, errObj []byte) {
				if errObj != nil {
					t.log.Warn("stream-json: the agent did not switch its mode", "mode", mode, "err", errorText(errObj))
				}
			})
		}
		t.success(reqID)
		return
	}
	if !t.hasMode(mode) {
		t.emit(streamjson.ErrorResponse(reqID, fmt.Sprintf("set_permission_mode %q: the agent offers no such mode (it offers %q; acpmux's gate knows plan and default)", mode, t.modes)))
		return
	}
	t.call(acp.MethodSessionSetMode, map[string]string{"sessionId": t.sid, "modeId": mode}, t.controlAnswer(reqID))
}

// enqueue queues a prompt; turns sends them one at a time.
func (t *translator) enqueue(p []streamjson.PromptBlock) {
	t.qmu.Lock()
	t.queue = append(t.queue, p)
	t.qmu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// nextPrompt waits for the next queued prompt; false after stdin EOF.
func (t *translator) nextPrompt() ([]streamjson.PromptBlock, bool) {
	for {
		t.qmu.Lock()
		t.running = false
		if t.eof {
			t.qmu.Unlock()
			return nil, false
		}
		if len(t.queue) > 0 {
			p := t.queue[0]
			t.queue = t.queue[1:]
			t.running = true
			t.qmu.Unlock()
			return p, true
		}
		t.qmu.Unlock()
		<-t.wake
	}
}

// turns runs the prompt turns in order, one at a time.
func (t *translator) turns() {
	defer close(t.turnsEnd)
	for {
		p, ok := t.nextPrompt()
		if !ok {
			return
		}
		t.mu.Lock()
		t.emit(t.m.Begin()...)
		t.mu.Unlock()
		t.flushOut()
		start := time.Now()
		done := make(chan struct{})
		t.call(acp.MethodSessionPrompt, map[string]any{"sessionId": t.sid, "prompt": p}, func(res, errObj []byte) {
			end := streamjson.TurnEnd{Duration: time.Since(start)}
			if errObj != nil {
				end.Err = errors.New(errorText(errObj))
			} else {
				end.StopReason = acp.MemberString(res, "stopReason")
			}
			for _, a := range t.conf.Interrupt() { // the turn is over: nothing is pending any more
				t.forget(a.RequestID)
				t.emit(&streamjson.ControlCancelRequest{RequestID: a.RequestID})
			}
			t.mu.Lock()
			t.emit(t.m.End(end)...)
			t.mu.Unlock()
			t.flushOut()
			close(done)
		})
		<-done
	}
}

func trimNewline(b []byte) []byte {
	b = bytesTrimSuffix(b, '\n')
	return bytesTrimSuffix(b, '\r')
}

func bytesTrimSuffix(b []byte, c byte) []byte {
	if len(b) > 0 && b[len(b)-1] == c {
		return b[:len(b)-1]
	}
	return b
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
