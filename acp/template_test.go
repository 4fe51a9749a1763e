package acp_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

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
		if v, want := p.ValidUTF8(), werr == nil && utf8.ValidString(line); v != want {
			t.Fatalf("after %q, Parser.Parse(%q): ValidUTF8 %v, utf8.Valid %v", first, line, v, want)
		}
	})
}

// TestParserValidUTF8: after a line a template took, ValidUTF8 says what
// utf8.Valid says of the line: its strings are checked where they may
// hold a byte >= 0x80 (in the text, at the end of a string, right after
// one), the rest of the line is the template's.
func TestParserValidUTF8(t *testing.T) {
	var p acp.Parser
	line := func(sid, text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"}}}}`
	}
	lines := []string{
		line("s1", "plain"),
		line("s1", `caf\u00e9 and café`),
		line("s1", "bad \xff byte"),
		line("s1", "end é"),
		line("s1", "end \xc3"),
		line("é", "x"),
		line("s1", strings.Repeat("a", 40)+"\xe2\x82"+strings.Repeat("b", 3)),
		line("s1", strings.Repeat("a", 40)+"€"+strings.Repeat("b", 3)),
		line("s1", "plain again"),
	}
	for _, l := range lines {
		if _, err := p.Parse([]byte(l)); err != nil {
			t.Fatalf("Parse(%q): %v", l, err)
		}
		if got, want := p.ValidUTF8(), utf8.ValidString(l); got != want {
			t.Errorf("Parse(%q): ValidUTF8 %v, utf8.Valid %v", l, got, want)
		}
	}
	if h := acp.ParserHits(&p); h != len(lines)-1 {
		t.Fatalf("%d of %d lines took the template", h, len(lines)-1)
	}
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
