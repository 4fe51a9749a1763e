package streamjson_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/streamjson"
)

// captureLine is one line of a recorded transcript: who wrote it and the
// stream-json message.
type captureLine struct {
	Dir string          `json:"dir"`
	Msg json.RawMessage `json:"msg"`
}

// readCapture returns the stream-json lines of a recorded transcript in
// testdata/captures (Claude Code 2.1.332, Qwen Code 0.24.4 and the Claude
// Agent SDK 0.3.332, driven offline against a stub model).
func readCapture(t *testing.T, name string) []captureLine {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "captures", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []captureLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l captureLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Dir != "argv" && l.Dir != "stderr" {
			out = append(out, l)
		}
	}
	return out
}

// TestCapturesDecodeAndRoundTrip decodes every message of the real
// transcripts: the known types decode to their Go types (never Unknown,
// except system subtypes acpmux does not use), and encoding the decoded
// value and decoding it again gives the same value.
func TestCapturesDecodeAndRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "captures", "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no captures")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			for i, l := range readCapture(t, filepath.Base(file)) {
				m, err := streamjson.Parse(l.Msg)
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if u, ok := m.(*streamjson.Unknown); ok && !(u.Type == "system" && u.Subtype == "session_state_changed") {
					t.Errorf("message %d decoded as unknown %s/%s", i, u.Type, u.Subtype)
				}
				b, err := streamjson.AppendMessage(nil, m)
				if err != nil {
					t.Fatalf("message %d: encode: %v", i, err)
				}
				m2, err := streamjson.Parse(b)
				if err != nil {
					t.Fatalf("message %d: decode again: %v\n%s", i, err, b)
				}
				if !reflect.DeepEqual(m, m2) {
					t.Errorf("message %d: round trip differs\n got %#v\nwant %#v", i, m2, m)
				}
			}
		})
	}
}

// TestCapturesDecoderStream runs the Decoder over the messages of one
// transcript joined as NDJSON, as a script would write them.
func TestCapturesDecoderStream(t *testing.T) {
	var in bytes.Buffer
	lines := readCapture(t, "claude-interrupt.jsonl")
	for _, l := range lines {
		in.Write(l.Msg)
		in.WriteByte('\n')
	}
	d := streamjson.NewDecoder(&in, streamjson.DecoderOptions{})
	var types []string
	for {
		m, err := d.Decode()
		if err != nil {
			break
		}
		types = append(types, m.MessageType())
	}
	if len(types) != len(lines) {
		t.Fatalf("decoded %d messages, want %d", len(types), len(lines))
	}
	want := "control_request user control_response system assistant control_request control_request control_cancel_request control_response user user result"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("types\n got %s\nwant %s", got, want)
	}
}
