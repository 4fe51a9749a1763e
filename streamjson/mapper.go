package streamjson

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/acpmux/acpmux/acp"
)

// MapperOptions configure a [Mapper].
type MapperOptions struct {
	Dialect Dialect
	Session SessionInfo
	// IncludePartialMessages also emits each chunk as a stream_event
	// (--include-partial-messages).
	IncludePartialMessages bool
	// NewID returns a fresh id for message ids and uuids (random 128-bit
	// hex when nil).
	NewID func() string
}

// Mapper turns the ACP side of one session into the stream-json messages a
// script reads: session/update notifications into assistant messages,
// tool_use blocks, tool_result user messages and stream events; the
// session/prompt response into a result. It is a pure state machine (no
// I/O, no clock) and not safe for concurrent use: feed it from the one
// goroutine that forwards the session's updates in order.
type Mapper struct {
	opt      MapperOptions
	mode     string
	commands []Command
	initSent bool
	cost     float64

	open     *block // the assistant text or thinking block being streamed
	tools    map[string]*tool
	turns    int
	newTurn  bool
	lastText string
	denials  []PermissionDenial
}

// block is an assistant text or thinking block being streamed.
type block struct {
	kind      string // BlockText or BlockThinking
	messageID string // ACP messageId, "" when the agent sends none
	id        string // the stream-json message id
	text      strings.Builder
}

// tool is what the mapper knows of one tool call.
type tool struct {
	name, kind, title string
	input, output     json.RawMessage
	content           json.RawMessage
	shown, done       bool
}

// NewMapper returns a Mapper for one session.
func NewMapper(o MapperOptions) *Mapper {
	if o.NewID == nil {
		o.NewID = randomID
	}
	return &Mapper{opt: o, mode: o.Session.PermissionMode, tools: map[string]*tool{}}
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// InitializeResponse returns the response payload to the script's
// initialize control request in the mapper's dialect (a
// [ClaudeInitializeResponse] or [QwenInitializeResponse]), with the slash
// commands and permission mode seen so far.
func (m *Mapper) InitializeResponse() any {
	return initializeResponse(m.opt.Dialect, m.opt.Session, m.mode, m.commands)
}

// Begin starts a prompt turn (a user message was sent as session/prompt).
// It returns system/init for the first turn and nothing after.
func (m *Mapper) Begin() []Message {
	m.turns, m.newTurn, m.lastText, m.denials = 0, true, "", nil
	if m.initSent {
		return nil
	}
	m.initSent = true
	return []Message{initMessage(m.opt.Dialect, m.opt.Session, m.mode, m.commands, m.opt.NewID())}
}

// acpUpdate is the union of the session/update variants the mapper reads.
type acpUpdate struct {
	SessionUpdate     string          `json:"sessionUpdate"`
	Content           json.RawMessage `json:"content"`
	ToolCallID        string          `json:"toolCallId"`
	Title             *string         `json:"title"`
	Kind              *string         `json:"kind"`
	Status            *string         `json:"status"`
	RawInput          json.RawMessage `json:"rawInput"`
	RawOutput         json.RawMessage `json:"rawOutput"`
	CurrentModeID     string          `json:"currentModeId"`
	AvailableCommands []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Input       *struct {
			Hint string `json:"hint"`
		} `json:"input"`
	} `json:"availableCommands"`
	Cost *struct {
		Amount   float64 `json:"amount"`
		Currency string  `json:"currency"`
	} `json:"cost"`
}

// Update maps the update object of one session/update notification (ACP
// "Prompt Turn"; the params' "update" member) to the messages to write, in
// order. Text chunks are buffered until the block ends; with
// IncludePartialMessages each also yields a stream_event. A tool call
// becomes an assistant tool_use block (with its raw input, byte for byte)
// once it has input or a status past pending, and a user tool_result when it
// completes or fails. current_mode_update yields system/status;
// available_commands_update and usage_update (a cost in USD) are recorded;
// other variants yield nothing. Malformed updates return an error wrapping
// acp.ErrInvalidParams.
func (m *Mapper) Update(update json.RawMessage) ([]Message, error) {
	if !json.Valid(update) {
		return nil, fmt.Errorf("%w: session/update: invalid JSON", acp.ErrInvalidParams)
	}
	// Fast path for the chunks that make up most of a turn.
	switch acp.MemberString(update, "sessionUpdate") {
	case "agent_message_chunk":
		return m.chunk(BlockText, update), nil
	case "agent_thought_chunk":
		return m.chunk(BlockThinking, update), nil
	}
	var u acpUpdate
	if err := json.Unmarshal(update, &u); err != nil {
		return nil, fmt.Errorf("%w: session/update: %v", acp.ErrInvalidParams, err)
	}
	switch u.SessionUpdate {
	case "tool_call", "tool_call_update":
		return m.toolCall(u, update), nil
	case "current_mode_update":
		m.mode = u.CurrentModeID
		s := &SystemStatus{SessionID: m.opt.Session.SessionID, UUID: m.opt.NewID()}
		s.PermissionMode, s.PermissionModeQwen = m.opt.Dialect.modeFields(u.CurrentModeID)
		return []Message{s}, nil
	case "available_commands_update":
		m.commands = m.commands[:0]
		for _, c := range u.AvailableCommands {
			cmd := Command{Name: c.Name, Description: c.Description}
			if c.Input != nil {
				cmd.ArgumentHint = c.Input.Hint
			}
			m.commands = append(m.commands, cmd)
		}
	case "usage_update":
		if u.Cost != nil && u.Cost.Currency == "USD" {
			m.cost = u.Cost.Amount
		}
	}
	return nil, nil
}

// chunk appends a text or thought chunk to the open block.
// Only text content is shown; other content blocks are skipped.
func (m *Mapper) chunk(kind string, update json.RawMessage) []Message {
	content := acp.MemberBytes(update, "content")
	if acp.MemberString(content, "type") != "text" {
		return nil
	}
	text, ok := acp.StringValue(acp.MemberBytes(content, "text"))
	if !ok {
		return nil
	}
	messageID := acp.MemberString(update, "messageId")
	var out []Message
	if m.open != nil && (m.open.kind != kind || m.open.messageID != messageID) {
		out = m.flush(out)
	}
	if m.open == nil {
		m.startMessage()
		m.open = &block{kind: kind, messageID: messageID, id: "msg_" + m.opt.NewID()}
		if m.opt.IncludePartialMessages {
			start := `{"type":"text","text":""}`
			if kind == BlockThinking {
				start = `{"type":"thinking","thinking":""}`
			}
			out = append(out, m.event(m.messageStart(m.open.id)), m.event(`{"type":"content_block_start","index":0,"content_block":`+start+`}`))
		}
	}
	m.open.text.WriteString(text)
	if m.opt.IncludePartialMessages {
		out = append(out, m.event(string(deltaEvent(kind, text))))
	}
	return out
}

// startMessage counts a model round trip when the message follows a tool
// result (or starts the turn).
func (m *Mapper) startMessage() {
	if m.newTurn {
		m.turns++
		m.newTurn = false
	}
}

func deltaEvent(kind, text string) []byte {
	b := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":`)
	if kind == BlockThinking {
		b = append(b, `"thinking_delta","thinking":`...)
	} else {
		b = append(b, `"text_delta","text":`...)
	}
	b = appendString(b, text)
	return append(b, "}}"...)
}

func (m *Mapper) messageStart(id string) string {
	b := []byte(`{"type":"message_start","message":{"id":`)
	b = appendString(b, id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = appendString(b, m.opt.Session.Model)
	return string(append(b, `,"content":[],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}`...))
}

// event returns a stream_event carrying the event JSON ev.
func (m *Mapper) event(ev string) Message {
	return &StreamEvent{UUID: m.opt.NewID(), SessionID: m.opt.Session.SessionID, Event: json.RawMessage(ev), built: true}
}

// flush ends the open block: its assistant message (and the closing
// stream events).
func (m *Mapper) flush(out []Message) []Message {
	b := m.open
	if b == nil {
		return out
	}
	m.open = nil
	cb := ContentBlock{Type: b.kind}
	if b.kind == BlockThinking {
		cb.Thinking = b.text.String()
	} else {
		cb.Text = b.text.String()
		m.lastText = cb.Text
	}
	return m.assistant(out, b.id, cb, false)
}

// assistant appends the assistant message with one block cb; with partial
// messages it is framed by stream events (started says whether
// message_start and content_block_start were already sent).
func (m *Mapper) assistant(out []Message, id string, cb ContentBlock, needStart bool) []Message {
	partial := m.opt.IncludePartialMessages
	if partial && needStart {
		start, _ := Marshal(ContentBlock{Type: BlockToolUse, ID: cb.ID, Name: cb.Name, Input: json.RawMessage("{}")})
		delta := append([]byte(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`), appendString(nil, string(cb.Input))...)
		out = append(out, m.event(m.messageStart(id)), m.event(`{"type":"content_block_start","index":0,"content_block":`+string(start)+`}`),
			m.event(string(delta)+"}}"))
	}
	if partial {
		out = append(out, m.event(`{"type":"content_block_stop","index":0}`))
	}
	out = append(out, &Assistant{Message: AssistantMessage{ID: id, Type: "message", Role: "assistant", Model: m.opt.Session.Model,
		Content: []ContentBlock{cb}, Usage: json.RawMessage(`{"input_tokens":0,"output_tokens":0}`)},
		SessionID: m.opt.Session.SessionID, UUID: m.opt.NewID()})
	if partial {
		out = append(out, m.event(`{"type":"message_delta","delta":{"stop_reason":null,"stop_sequence":null},"usage":{"output_tokens":0}}`),
			m.event(`{"type":"message_stop"}`))
	}
	return out
}

// TurnEnd is the end of a prompt turn: the session/prompt response's
// stopReason, or Err when it was an error response, and the turn's wall
// time.
type TurnEnd struct {
	StopReason string
	Err        error
	Duration   time.Duration
}

// End finishes the prompt turn: the last buffered block and the result.
// end_turn, max_tokens, refusal and unknown stop reasons give a success
// result whose result is the last text block; cancelled and an error give
// error_during_execution, max_turn_requests error_max_turns, with the error
// text in errors (Claude) or error.message (Qwen). stop_reason is the ACP
// stop reason; num_turns counts model round trips (assistant messages
// separated by tool results); duration_api_ms is duration_ms (acpmux cannot
// tell model time apart).
func (m *Mapper) End(e TurnEnd) []Message {
	out := m.flush(nil)
	ms := e.Duration.Milliseconds()
	r := &Result{Subtype: ResultSuccess, DurationMS: ms, DurationAPIMS: ms, NumTurns: max(m.turns, 1), SessionID: m.opt.Session.SessionID,
		UUID: m.opt.NewID(), TotalCostUSD: m.cost, Usage: json.RawMessage(`{"input_tokens":0,"output_tokens":0}`),
		PermissionDenials: orEmpty(m.denials)}
	if e.StopReason != "" {
		r.StopReason = &e.StopReason
	}
	var msg string
	switch {
	case e.Err != nil:
		r.Subtype, msg = ResultErrorDuringExecution, e.Err.Error()
	case e.StopReason == "cancelled":
		r.Subtype, msg = ResultErrorDuringExecution, "prompt turn cancelled"
	case e.StopReason == "max_turn_requests":
		r.Subtype, msg = ResultErrorMaxTurns, "maximum number of model requests reached"
	default:
		r.Result = m.lastText
	}
	if msg != "" {
		r.IsError = true
		if m.opt.Dialect == DialectQwen {
			r.Error = &ResultError{Message: msg}
		} else {
			r.Errors = []string{msg}
		}
	}
	m.tools, m.denials = map[string]*tool{}, nil
	return append(out, r)
}
