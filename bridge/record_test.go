package bridge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/acpmux/acpmux/bridge"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"authorization member", `{"_meta":{"Authorization":"Bearer abc"}}`, `{"_meta":{"Authorization":"[redacted]"}}`},
		{"token members", `{"_meta":{"accessToken":"a","x-api-token":"b","refresh_token":{"v":1}}}`,
			`{"_meta":{"accessToken":"[redacted]","refresh_token":"[redacted]","x-api-token":"[redacted]"}}`},
		{"header pair", `{"headers":[{"name":"authorization","value":"Basic dXNlcjpwdw=="},{"name":"Accept","value":"x"}]}`,
			`{"headers":[{"name":"authorization","value":"[redacted]"},{"name":"Accept","value":"x"}]}`},
		{"env pair", `{"env":[{"name":"OPENAI_API_KEY","value":"sk-1"},{"name":"PATH","value":"/bin"}]}`,
			`{"env":[{"name":"OPENAI_API_KEY","value":"[redacted]"},{"name":"PATH","value":"/bin"}]}`},
		{"bearer in text", `{"text":"curl -H 'Authorization: Bearer eyJ.abc-1'"}`, `{"text":"curl -H 'Authorization: Bearer [redacted]'"}`},
		{"known secret anywhere", `{"prompt":[{"text":"the token is s3cr3t-tok, ok"}]}`, `{"prompt":[{"text":"the token is [redacted], ok"}]}`},
		{"known secret as a member name", `{"_meta":{"s3cr3t-tok":1,"x":{"a s3cr3t-tok b":"v"}}}`, `{"_meta":{"[redacted]":1,"x":{"a [redacted] b":"v"}}}`},
		{"token counts kept", `{"usage":{"inputTokens":12,"maxTokens":3}}`, `{"usage":{"inputTokens":12,"maxTokens":3}}`},
		{"numbers kept exactly", `{"id":12345678901234567890,"x":1.50}`, `{"id":12345678901234567890,"x":1.50}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := bridge.Redact([]byte(tt.in), []string{"s3cr3t-tok"})
			if !ok {
				t.Fatal("not JSON")
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, ok := bridge.Redact([]byte("not json"), nil); ok {
		t.Error("a line that is not JSON was redacted as JSON")
	}
}

// blockedWriter blocks every Write until release is closed: a disk that
// stops.
type blockedWriter struct {
	entered chan struct{} // gets a value when a Write starts
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestRecorderNeverBlocksOnASlowDisk: with the transcript's writer stuck
// in a Write, Message returns at once for 1000 more messages into a queue
// of 4: 996 are dropped, counted and noted in the transcript as a
// "dropped" entry, and the others are written once the writer moves.
func TestRecorderNeverBlocksOnASlowDisk(t *testing.T) {
	w := &blockedWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	r := bridge.NewRecorder(w, bridge.RecorderOptions{QueueLen: 4})
	done := make(chan error)
	go func() { done <- r.Run() }()
	msg := func(i int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + strings.Repeat("1", 1+i%3) + `,"method":"m"}`)
	}
	r.Message(bridge.FromHost, "stdio", msg(0))
	<-w.entered // Run flushes the first message and is stuck in the disk's Write
	for i := range 1000 {
		r.Message(bridge.FromHost, "stdio", msg(i+1))
	}
	if r.Dropped() != 1000-4 {
		t.Fatalf("dropped %d of 1000 with a queue of 4, want 996", r.Dropped())
	}
	close(w.release)
	r.Close()
	r.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var written, dropped int64
	sc := bufio.NewScanner(&w.buf)
	for sc.Scan() {
		var e bridge.RecordEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Dir == bridge.DirDropped {
			dropped += e.Dropped
			continue
		}
		written++
	}
	if written != 5 || dropped != 996 {
		t.Fatalf("written %d, dropped %d; want 5 written and 996 noted as dropped", written, dropped)
	}
}

// TestRecorderRedactsPerPersonTokens: a substring that IsToken recognises
// as a token (64 hex digits, in any case, inside a longer hex run too) is
// redacted in strings, member names and lines that are not JSON; other
// 64-digit hex strings (a SHA-256 sum) are kept.
func TestRecorderRedactsPerPersonTokens(t *testing.T) {
	tok := strings.Repeat("ab12", 16)
	other := strings.Repeat("cd34", 16)
	var buf bytes.Buffer
	r := bridge.NewRecorder(&buf, bridge.RecorderOptions{IsToken: func(s string) bool { return s == tok }})
	done := make(chan error)
	go func() { done <- r.Run() }()
	r.Message(bridge.FromHost, "stdio", []byte(`{"params":{"text":"use `+tok+` and `+other+`","`+tok+`":"k","hex":"ff`+strings.ToUpper(tok)+`0"}}`))
	r.Message(bridge.FromAgent, bridge.AgentTapID, []byte("log: "+tok))
	r.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(strings.ToLower(out), tok) {
		t.Errorf("the transcript holds the token:\n%s", out)
	}
	for _, want := range []string{`"text":"use [redacted] and ` + other + `"`, `"[redacted]":"k"`, `"hex":"ff[redacted]0"`, `"text":"log: [redacted]"`} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %s:\n%s", want, out)
		}
	}
}
