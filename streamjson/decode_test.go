package streamjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/streamjson"
)

// TestDecoderGoesOnAfterBadLines: malformed and over-long lines return a
// LineError with their line number and decoding continues; CRLF, blank
// lines and a final line without newline are handled.
func TestDecoderGoesOnAfterBadLines(t *testing.T) {
	long := `{"type":"keep_alive","pad":"` + strings.Repeat("x", 300) + `"}`
	in := "{\"type\":\"keep_alive\"}\r\n\n[1,2]\n" + long + "\n{\"type\":1}\n" + long + `{"type":"keep_alive"}`
	d := streamjson.NewDecoder(strings.NewReader(in), streamjson.DecoderOptions{MaxLineBytes: 256})
	type res struct {
		typ  string
		line int
		err  error
	}
	var got []res
	for {
		m, err := d.Decode()
		if err == io.EOF {
			break
		}
		var le *streamjson.LineError
		switch {
		case errors.As(err, &le):
			got = append(got, res{line: le.Line, err: le.Err})
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, res{typ: m.MessageType(), line: d.Line()})
		}
	}
	want := []struct {
		typ  string
		line int
		err  error
	}{{"keep_alive", 1, nil}, {"", 3, streamjson.ErrMalformed}, {"", 4, streamjson.ErrLineTooLong}, {"", 5, streamjson.ErrMalformed}, {"", 6, streamjson.ErrLineTooLong}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i, w := range want {
		if got[i].typ != w.typ || got[i].line != w.line || (w.err != nil) != (got[i].err != nil) || w.err != nil && !errors.Is(got[i].err, w.err) {
			t.Errorf("result %d: got %+v, want %+v", i, got[i], w)
		}
	}
}

// TestDecoderLogsIgnoredAtDebug: unknown types, subtypes and members are
// values, not errors, and are reported at debug level.
func TestDecoderLogsIgnoredAtDebug(t *testing.T) {
	var logs bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	in := `{"type":"brand_new"}
{"type":"control_request","request_id":"1","request":{"subtype":"get_usage","range":"day"}}
{"type":"user","message":{"role":"user","content":"x"},"parent_tool_use_id":null,"session_id":"","shouldQuery":true}
`
	d := streamjson.NewDecoder(strings.NewReader(in), streamjson.DecoderOptions{Logger: lg})
	m1, err1 := d.Decode()
	m2, err2 := d.Decode()
	_, err3 := d.Decode()
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatal(err1, err2, err3)
	}
	if u, ok := m1.(*streamjson.Unknown); !ok || u.Type != "brand_new" {
		t.Errorf("m1 = %#v", m1)
	}
	if u, ok := m2.(*streamjson.ControlRequest).Request.(*streamjson.UnknownRequest); !ok || u.Type != "get_usage" || !json.Valid(u.Raw) {
		t.Errorf("m2 = %#v", m2)
	}
	for _, w := range []string{"type=brand_new", "subtype=get_usage", "shouldQuery"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("debug log lacks %q:\n%s", w, logs.String())
		}
	}
}

// TestEncoderWritesRawInputByteForByte: a tool call's raw input keeps its
// spacing, key order and escapes; strings are not HTML-escaped; one line
// per message.
func TestEncoderWritesRawInputByteForByte(t *testing.T) {
	raw := `{"z": 1, "a": "<&>\u00e9", "n": 1.50}`
	var out bytes.Buffer
	e := streamjson.NewEncoder(&out)
	a := streamjson.PermissionAsk{RequestID: "r", ToolCallID: "t", Title: "a <b> & c", RawInput: json.RawMessage(raw), Dialect: streamjson.DialectClaude}
	if err := e.Encode(streamjson.CanUseTool(a)); err != nil {
		t.Fatal(err)
	}
	if err := e.Encode(&streamjson.KeepAlive{}); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","tool_name":"other","input":` + raw +
		`,"tool_use_id":"t","title":"a <b> & c","description":"a <b> & c"}}` + "\n" + `{"type":"keep_alive"}` + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if err := e.Encode(&streamjson.Assistant{Message: streamjson.AssistantMessage{Content: []streamjson.ContentBlock{{Type: "tool_use", Input: json.RawMessage(`{bad`)}}}}); err == nil {
		t.Error("invalid raw input was encoded")
	}
}

// TestPrompt maps user messages to ACP prompt blocks.
func TestPrompt(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"string", `{"type":"user","message":{"role":"user","content":"hi"}}`, `[{"type":"text","text":"hi"}]`},
		{"blocks", `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}}`,
			`[{"type":"text","text":"see"},{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"resource_link","uri":"https://x/y.png","name":"https://x/y.png"}]`},
		{"empty", `{"type":"user","message":{"role":"user","content":""}}`, ``},
		{"no blocks", `{"type":"user","message":{"role":"user","content":[]}}`, ``},
		{"tool_result", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}`, ``},
		{"image without data", `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64"}}]}}`, ``},
		{"assistant role", `{"type":"user","message":{"role":"assistant","content":"hi"}}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := streamjson.Parse([]byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			p, err := streamjson.Prompt(m.(*streamjson.User))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %+v, want an error", p)
				}
				return
			}
			b, _ := json.Marshal(p)
			if err != nil || !streamjson.JSONEqual(b, []byte(tt.want)) {
				t.Errorf("got %s, %v; want %s", b, err, tt.want)
			}
		})
	}
}

// TestElicitation builds the control request from ACP params. The
// script's answers are decoded by question.DecodeAnswer and checked by the
// broker (the claude-question-* session goldens in cmd/acpmux).
func TestElicitation(t *testing.T) {
	cr, err := streamjson.Elicitation("e1", "acpmux", json.RawMessage(`{"sessionId":"s","message":"Name?","mode":"form","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := streamjson.AppendMessage(nil, cr)
	want := `{"type":"control_request","request_id":"e1","request":{"subtype":"elicitation","mcp_server_name":"acpmux","message":"Name?","mode":"form","requested_schema":{"type":"object","properties":{"name":{"type":"string"}}}}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
