package acp_test

import (
	"fmt"
	"testing"

	"github.com/acpmux/acpmux/acp"
)

const chunkLine = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"token 1 of the flood"}}}}`

// parserPairs are (earlier line, line) pairs: the second shaped like the
// first with other strings, or almost.
var parserPairs = [][2]string{
	{chunkLine, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s\"2","update":{"sessionUpdate":"tool_call","content":{"type":"image","text":"\u00e9\n"}}}}`},
	{chunkLine, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bad` + "\x01" + `"}}}}`},
	{chunkLine, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"unterminated}}}}`},
	{chunkLine, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}}`},
	{chunkLine, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}} `},
	{chunkLine, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a","text":"b"}}}}`},
	{chunkLine, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`},
	{`{"jsonrpc":"2.0","method":"m","params":["a",{"_meta":{"acpmux":"b"}},"c"]}`, `{"jsonrpc":"2.0","method":"m","params":["",{"_meta":{"acpmux":"\\"}},"\/"]}`},
	{`{"method":"m","params":{"a":"x","b":"y"}}`, `{"method":"m","params":{"a":"x"` + `,"b":"y"}}`},
	{`{"method":"m","params":{"a":"x","b":"y"}}`, `{"method":"m","params":{"a":"x","a":"y"}}`},
}

// FuzzParserAgreesWithParse: a Parser that has seen one line returns for
// the next exactly what Parse returns: the same envelope, or the same
// error for a line that is not a JSON-RPC message.
func FuzzParserAgreesWithParse(f *testing.F) {
	for _, p := range parserPairs {
		f.Add(p[0], p[1])
	}
	for _, tt := range parseTests {
		f.Add(chunkLine, tt.line)
		f.Add(tt.line, tt.line)
	}
	f.Fuzz(func(t *testing.T, first, line string) {
		var p acp.Parser
		p.Parse([]byte(first))
		got, gerr := p.Parse([]byte(line))
		want, werr := acp.Parse([]byte(line))
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || got != want {
			t.Fatalf("after %q, Parser.Parse(%q) = %+v, %v\nParse = %+v, %v", first, line, got, gerr, want, werr)
		}
	})
}

// TestParserTakesLinesShapedLikeAnEarlierOne: notifications that differ
// from an earlier one only in their strings take the template path, with
// the envelope Parse finds; a line of another shape, a malformed string or
// a different method does not.
func TestParserTakesLinesShapedLikeAnEarlierOne(t *testing.T) {
	var p acp.Parser
	check := func(line string) {
		t.Helper()
		got, gerr := p.Parse([]byte(line))
		want, werr := acp.Parse([]byte(line))
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || got != want {
			t.Fatalf("Parser.Parse(%q) = %+v, %v; Parse = %+v, %v", line, got, gerr, want, werr)
		}
	}
	check(chunkLine)
	for i := range 3 {
		check(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-%d","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"token %d \"quoted\" \u00e9"}}}}`, i, i))
	}
	if h := acp.ParserHits(&p); h != 3 {
		t.Fatalf("%d of 3 lines of the same shape took the template", h)
	}
	for _, pair := range parserPairs[1:7] {
		check(pair[1])
	}
	if h := acp.ParserHits(&p); h != 3 {
		t.Fatalf("a malformed or differently shaped line took the template (%d hits)", h)
	}
}
