package acp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp"
)

// BenchmarkParserFlood measures Parser.Parse on the agent_message_chunk
// notifications of bench/floodagent (one template takes them all).
func BenchmarkParserFlood(b *testing.B) {
	lines := make([][]byte, 1024)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"token %d of the flood, some words to make it a typical chunk of an answer streamed by a model"}}}}`, i)
	}
	var p acp.Parser
	b.SetBytes(int64(len(lines[0])))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := p.Parse(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestValidStringsAtEveryOffset: the string scanner, which reads 16 and
// then 8 bytes at a time, agrees with encoding/json on strings of every
// length up to 48 with a quote, a backslash escape, a bad escape, a
// control byte or a byte >= 0x80 at every offset.
func TestValidStringsAtEveryOffset(t *testing.T) {
	for n := range 48 {
		for at := range n + 1 {
			for _, ins := range []string{`"`, `\n`, `\u00e9`, `\x`, "\x01", "\x1f", "\xc3\xa9", `\`} {
				s := strings.Repeat("a", at) + ins + strings.Repeat("b", n-at)
				for _, line := range []string{`"` + s + `"`, `["` + s + `",1]`, `"` + s} {
					if got, want := acp.Valid([]byte(line)), json.Valid([]byte(line)); got != want {
						t.Fatalf("Valid(%q) = %v, encoding/json says %v", line, got, want)
					}
				}
			}
		}
	}
}
