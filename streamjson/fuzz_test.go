package streamjson_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/streamjson"
)

// FuzzStreamJSONLine: Parse never panics; a line that parses encodes, and
// the encoding parses again to the same value (raw members byte for byte).
func FuzzStreamJSONLine(f *testing.F) {
	for _, l := range seedLines(f) {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := streamjson.Parse(line)
		if err != nil {
			return
		}
		b, err := streamjson.AppendMessage(nil, m)
		if err != nil {
			t.Fatalf("encode %T: %v", m, err)
		}
		m2, err := streamjson.Parse(b)
		if err != nil {
			t.Fatalf("encoding does not parse: %v\nline %s\nenc  %s", err, line, b)
		}
		// The same value: both encode to the same bytes (raw members are
		// written verbatim, a missing raw member as null), and the second
		// decoding is a fixed point.
		b2, err := streamjson.AppendMessage(nil, m2)
		if err != nil || string(b2) != string(b) {
			t.Fatalf("round trip differs (%v)\nline %s\nenc  %s\nenc2 %s", err, line, b, b2)
		}
		m3, err := streamjson.Parse(b2)
		if err != nil || !reflect.DeepEqual(m2, m3) {
			t.Fatalf("not a fixed point (%v)\n got %#v\nwant %#v", err, m3, m2)
		}
	})
}

// seedLines returns the script and agent lines of the golden sessions and
// the messages of the captures.
func seedLines(f *testing.F) []string {
	var out []string
	files, _ := filepath.Glob(filepath.Join("testdata", "sessions", "*.txtar"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(l, "script "); ok {
				out = append(out, rest)
			}
			if rest, ok := strings.CutPrefix(l, "sj "); ok {
				out = append(out, rest)
			}
		}
	}
	return out
}
