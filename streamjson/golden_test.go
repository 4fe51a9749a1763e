package streamjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/acpmux/acpmux/streamjson"
)

var update = flag.Bool("update", false, "rewrite the want section of testdata/sessions/*.txtar")

// sessionOptions is the options file of a golden session.
type sessionOptions struct {
	Dialect      streamjson.Dialect     `json:"dialect"`
	Partial      bool                   `json:"partial"`
	MaxLineBytes int                    `json:"maxLineBytes"`
	Session      streamjson.SessionInfo `json:"session"`
}

// harness is a minimal stand-in for the wiring of a stream-json host: it
// feeds script lines through a Decoder and agent events through a Mapper
// and Confirmations, and records what each side would receive.
type harness struct {
	t    *testing.T
	dia  streamjson.Dialect
	in   bytes.Buffer
	dec  *streamjson.Decoder
	m    *streamjson.Mapper
	conf *streamjson.Confirmations
	out  []string
}

func newHarness(t *testing.T, o sessionOptions) *harness {
	h := &harness{t: t, dia: o.Dialect, conf: streamjson.NewConfirmations()}
	n := 0
	h.m = streamjson.NewMapper(streamjson.MapperOptions{Dialect: o.Dialect, Session: o.Session, IncludePartialMessages: o.Partial,
		NewID: func() string { n++; return fmt.Sprintf("id-%d", n) }})
	h.dec = streamjson.NewDecoder(&h.in, streamjson.DecoderOptions{MaxLineBytes: o.MaxLineBytes})
	return h
}

func (h *harness) sj(ms ...streamjson.Message) {
	for _, m := range ms {
		b, err := streamjson.AppendMessage(nil, m)
		if err != nil {
			h.t.Fatalf("encode %T: %v", m, err)
		}
		h.out = append(h.out, "sj "+string(b))
	}
}

func (h *harness) acp(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	h.out = append(h.out, "acp "+string(b))
}

func (h *harness) log(format string, args ...any) {
	h.out = append(h.out, "log "+fmt.Sprintf(format, args...))
}

// step runs one line of the steps file.
func (h *harness) step(line string) {
	verb, arg, _ := strings.Cut(line, " ")
	switch verb {
	case "script":
		h.in.WriteString(arg + "\n")
		h.script()
	case "script-long":
		var n int
		fmt.Sscan(arg, &n)
		h.in.WriteString(`{"type":"user","pad":"` + strings.Repeat("x", n) + "\"}\n")
		h.script()
	case "agent":
		ms, err := h.m.Update(json.RawMessage(arg))
		if err != nil {
			h.log("update: %v", err)
		}
		h.sj(ms...)
	case "permission":
		var p struct {
			ID       string          `json:"id"`
			Params   json.RawMessage `json:"params"`
			Warnings []string        `json:"warnings"`
			OneOff   bool            `json:"oneOff"`
		}
		h.decode(arg, &p)
		a, err := streamjson.NewPermissionAsk(p.ID, p.Params, p.Warnings, p.OneOff, h.dia)
		if err != nil {
			h.t.Fatal(err)
		}
		h.sj(h.m.Permission(a)...)
		cr, err := h.conf.Ask(a)
		if err != nil {
			h.t.Fatal(err)
		}
		h.sj(cr)
	case "withdraw":
		if c, ok := h.conf.Withdraw(arg); ok {
			h.sj(c)
		} else {
			h.log("withdraw %s: not pending", arg)
		}
	case "end":
		var e struct {
			StopReason string `json:"stopReason"`
			Error      string `json:"error"`
			DurationMS int64  `json:"durationMs"`
		}
		h.decode(arg, &e)
		te := streamjson.TurnEnd{StopReason: e.StopReason, Duration: time.Duration(e.DurationMS) * time.Millisecond}
		if e.Error != "" {
			te.Err = errors.New(e.Error)
		}
		h.sj(h.m.End(te)...)
	default:
		h.t.Fatalf("unknown step %q", line)
	}
}

func (h *harness) decode(s string, v any) {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		h.t.Fatalf("step %s: %v", s, err)
	}
}

// script decodes and handles the script line just written.
func (h *harness) script() {
	msg, err := h.dec.Decode()
	if err != nil {
		h.log("%v", err)
		return
	}
	switch m := msg.(type) {
	case *streamjson.User:
		p, err := streamjson.Prompt(m)
		if err != nil {
			h.log("user message refused: %v", err)
			return
		}
		h.sj(h.m.Begin()...)
		h.acp(map[string]any{"method": "session/prompt", "prompt": p})
	case *streamjson.ControlRequest:
		h.control(m)
	case *streamjson.ControlResponse:
		a, v, err := h.conf.Answer(m.Response)
		switch {
		case errors.Is(err, streamjson.ErrUnknownRequest):
			h.log("%v", err)
		case err != nil:
			h.acp(map[string]any{"permission": a.RequestID, "refused": err.Error(), "stale": errors.Is(err, streamjson.ErrStaleApproval)})
		default:
			if v.Kind == "reject_once" {
				h.m.Denied(a)
				h.log("denied %s: %q interrupt=%v", a.RequestID, v.Message, v.Interrupt)
			}
			h.acp(map[string]any{"permission": a.RequestID, "result": streamjson.SelectedOutcome(v)})
		}
	default:
		h.log("ignored %s message", msg.MessageType())
	}
}

func (h *harness) control(c *streamjson.ControlRequest) {
	switch r := c.Request.(type) {
	case *streamjson.InitializeRequest:
		resp, err := streamjson.SuccessResponse(c.RequestID, h.m.InitializeResponse())
		if err != nil {
			h.t.Fatal(err)
		}
		h.sj(resp)
	case *streamjson.InterruptRequest:
		for _, a := range h.conf.Interrupt() {
			h.acp(map[string]any{"permission": a.RequestID, "result": streamjson.CancelledOutcome()})
			h.sj(&streamjson.ControlCancelRequest{RequestID: a.RequestID})
		}
		h.acp(map[string]any{"method": "session/cancel"})
		resp, _ := streamjson.SuccessResponse(c.RequestID, nil)
		h.sj(resp)
	case *streamjson.SetPermissionModeRequest:
		h.acp(map[string]any{"method": "session/set_mode", "modeId": r.Mode})
		resp, _ := streamjson.SuccessResponse(c.RequestID, nil)
		h.sj(resp)
	default:
		h.sj(streamjson.ErrorResponse(c.RequestID, fmt.Sprintf("unsupported control request subtype %q", c.Request.Subtype())))
	}
}

// TestGoldenSessions replays testdata/sessions/*.txtar: each has options
// (dialect, partial messages, session), steps (script lines, agent
// session/update objects, permission requests, withdrawals, turn ends)
// and the lines each side receives: "sj" what the script reads, "acp" what
// goes to the agent, "log" what is logged. sj and acp lines are compared as
// JSON values. Run with -update to rewrite the want sections.
func TestGoldenSessions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sessions", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no sessions")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string][]byte{}
			for _, f := range ar.Files {
				sec[f.Name] = f.Data
			}
			var o sessionOptions
			if err := json.Unmarshal(sec["options"], &o); err != nil {
				t.Fatalf("options: %v", err)
			}
			h := newHarness(t, o)
			for _, l := range strings.Split(strings.TrimSpace(string(sec["steps"])), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					h.step(l)
				}
			}
			if *update {
				for i := range ar.Files {
					if ar.Files[i].Name == "want" {
						ar.Files[i].Data = []byte(strings.Join(h.out, "\n") + "\n")
					}
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			compareLines(t, h.out, strings.Split(strings.TrimSpace(string(sec["want"])), "\n"))
		})
	}
}

// compareLines compares got and want line by line: "log" lines as text,
// others as "<side> <JSON>" with the JSON compared as values.
func compareLines(t *testing.T, got, want []string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		gs, gj, _ := strings.Cut(g, " ")
		ws, wj, _ := strings.Cut(w, " ")
		if gs != ws || (gs == "log" && gj != wj) || (gs != "log" && !streamjson.JSONEqual([]byte(gj), []byte(wj))) {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
}
