package acp_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/acp"
)

var parseTests = []struct {
	name, line string
	kind       acp.Kind
	method, id string
	err        error
}{
	{"request", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, acp.KindRequest, "initialize", "1", nil},
	{"string id", `{"jsonrpc":"2.0","id":"a\"b","method":"x"}`, acp.KindRequest, "x", `"a\"b"`, nil},
	{"null id request", `{"jsonrpc":"2.0","id":null,"method":"x"}`, acp.KindRequest, "x", "null", nil},
	{"huge negative id", `{"id":-184467440737095516161,"method":"x"}`, acp.KindRequest, "x", "-184467440737095516161", nil},
	{"notification", `{"jsonrpc":"2.0","method":"session/update","params":{"a":[1,{"b":"}"}]}}`, acp.KindNotification, "session/update", "", nil},
	{"escaped method", `{"method":"session\/cancel"}`, acp.KindNotification, "session/cancel", "", nil},
	{"escaped key", `{"\u006dethod":"x","id":2}`, acp.KindRequest, "x", "2", nil},
	{"result", `{"jsonrpc":"2.0","id":7,"result":null}`, acp.KindResponse, "", "7", nil},
	{"error", ` {"id":7 , "error":{"code":1}} `, acp.KindResponse, "", "7", nil},
	{"white space", "{ \"id\" :\t3 ,\"method\" : \"m\" }", acp.KindRequest, "m", "3", nil},
	{"not json", `Welcome back!`, 0, "", "", acp.ErrNotJSON},
	{"half object", `{"jsonrpc":"2.0","id":1,"res`, 0, "", "", acp.ErrNotJSON},
	{"array", `[1,2]`, 0, "", "", acp.ErrInvalidRequest},
	{"string", `"x"`, 0, "", "", acp.ErrInvalidRequest},
	{"both method and result", `{"id":1,"method":"x","result":1}`, 0, "", "", acp.ErrInvalidRequest},
	{"both result and error", `{"id":1,"result":1,"error":{}}`, 0, "", "", acp.ErrInvalidRequest},
	{"neither", `{"jsonrpc":"2.0"}`, 0, "", "", acp.ErrInvalidRequest},
	{"response without id", `{"result":1}`, 0, "", "", acp.ErrInvalidRequest},
	{"object id", `{"id":{},"method":"x"}`, 0, "", "", acp.ErrInvalidRequest},
	{"bool id", `{"id":true,"method":"x"}`, 0, "", "", acp.ErrInvalidRequest},
	{"numeric method", `{"id":1,"method":5}`, 0, "", "", acp.ErrInvalidRequest},
	{"duplicate id", `{"id":1,"id":2,"result":1}`, 0, "", "", acp.ErrInvalidRequest},
	{"duplicate escaped id", `{"id":1,"\u0069d":2,"result":1}`, 0, "", "", acp.ErrInvalidRequest},
	{"duplicate method", `{"method":"a","method":"b"}`, 0, "", "", acp.ErrInvalidRequest},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := acp.Parse([]byte(tt.line))
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if env.Kind != tt.kind || env.Method != tt.method || string(env.ID.Bytes([]byte(tt.line))) != tt.id {
				t.Errorf("got kind %v method %q id %s, want %v %q %s", env.Kind, env.Method, env.ID.Bytes([]byte(tt.line)), tt.kind, tt.method, tt.id)
			}
		})
	}
}

func TestWithIDKeepsEveryOtherByte(t *testing.T) {
	line := []byte(`{"params":{"_meta":{"x":[1,2]},"weird" : "\u00e9"},"id":"orig-1","method":"m","jsonrpc":"2.0"}`)
	env, err := acp.Parse(line)
	if err != nil {
		t.Fatal(err)
	}
	got := acp.WithID(line, env.ID, []byte("42"))
	want := `{"params":{"_meta":{"x":[1,2]},"weird" : "\u00e9"},"id":42,"method":"m","jsonrpc":"2.0"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestIDKey(t *testing.T) {
	same := [][2]string{{"7", "7.0"}, {"7", "7e0"}, {`"a"`, `"\u0061"`}, {"-3", "-3"}}
	for _, p := range same {
		if acp.IDKey([]byte(p[0])) != acp.IDKey([]byte(p[1])) {
			t.Errorf("IDKey(%s) != IDKey(%s)", p[0], p[1])
		}
	}
	differ := [][2]string{{"7", `"7"`}, {"1", "2"}, {"18446744073709551616", "18446744073709551617"}, {`"a"`, `"A"`}}
	for _, p := range differ {
		if acp.IDKey([]byte(p[0])) == acp.IDKey([]byte(p[1])) {
			t.Errorf("IDKey(%s) == IDKey(%s)", p[0], p[1])
		}
	}
}

func TestMember(t *testing.T) {
	obj := []byte(`{"a":{"sessionId":"inner"},"sessionId":"s\"1","b":[{"sessionId":2}]}`)
	if got := acp.MemberString(obj, "sessionId"); got != `s"1` {
		t.Errorf("MemberString = %q, want the top-level member", got)
	}
	if acp.Member(obj, "missing").Present() || acp.Member([]byte(`[1]`), "a").Present() {
		t.Error("absent member reported present")
	}
}

// FuzzEnvelope: Parse never panics; whatever it accepts is valid JSON; the
// envelope survives an id replacement, and every byte outside the id is kept.
func FuzzEnvelope(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		env, err := acp.Parse([]byte(line))
		if err != nil {
			return
		}
		if !json.Valid([]byte(line)) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		if got, want := env.Update, updateByMembers([]byte(line), env.Params); got != want {
			t.Fatalf("Update of %q = %+v, Members finds %+v", line, got, want)
		}
		if !env.ID.Present() {
			return
		}
		out := acp.WithID([]byte(line), env.ID, []byte(`"new"`))
		env2, err := acp.Parse(out)
		if err != nil {
			t.Fatalf("after WithID: %v (%s)", err, out)
		}
		if env2.Kind != env.Kind || env2.Method != env.Method || string(env2.ID.Bytes(out)) != `"new"` {
			t.Fatalf("envelope changed: %+v -> %+v", env, env2)
		}
		if line[:env.ID.Start] != string(out[:env.ID.Start]) || line[env.ID.End:] != string(out[env2.ID.End:]) {
			t.Fatalf("bytes outside the id changed: %q -> %q", line, out)
		}
	})
}

// updateByMembers locates UpdateSpans with acp.Members, one level at a time.
func updateByMembers(line []byte, params acp.Span) acp.UpdateSpans {
	var u acp.UpdateSpans
	if !params.Present() || line[params.Start] != '{' {
		return u
	}
	at := func(base, s acp.Span) acp.Span {
		if !s.Present() {
			return s
		}
		return acp.Span{Start: base.Start + s.Start, End: base.Start + s.End}
	}
	var p, up, c [3]acp.Span
	_, u.ParamsOther = acp.Members(params.Bytes(line), []string{"sessionId", "update"}, p[:2])
	u.SessionID, u.Update = at(params, p[0]), at(params, p[1])
	if !u.Update.Present() {
		return u
	}
	_, u.UpdateOther = acp.Members(u.Update.Bytes(line), []string{"sessionUpdate", "content", "messageId"}, up[:])
	u.Kind, u.Content, u.MessageID = at(u.Update, up[0]), at(u.Update, up[1]), at(u.Update, up[2])
	if !u.Content.Present() {
		return u
	}
	_, u.ContentOther = acp.Members(u.Content.Bytes(line), []string{"type", "text"}, c[:2])
	u.ContentType, u.Text = at(u.Content, c[0]), at(u.Content, c[1])
	return u
}

// TestParseRefusesDuplicateParamsMembers: a member of params that Parse
// routes or replays by (sessionId, update, and their sessionUpdate,
// content, messageId, type, text) given twice, also under an escaped
// spelling, is invalid params: Parse would read the first and a
// host's JSON decoder the last, so the message would go to one session's
// hosts while they read it as another's.
func TestParseRefusesDuplicateParamsMembers(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","sessionId":"s2","update":{"sessionUpdate":"a"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","sessionI\u0064":"s2","update":{"sessionUpdate":"a"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"a","content":[1]},"update":{"sessionUpdate":"b"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"d1","text":"d2"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"a","sessionUpdate":"b"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[],"sessionId":"s2"}}`,
	} {
		if _, err := acp.Parse([]byte(line)); !errors.Is(err, acp.ErrInvalidParams) || !strings.Contains(err.Error(), "duplicate member") {
			t.Errorf("Parse(%s) = %v, want a duplicate member refused", line, err)
		}
		// A Parser that learned the shape of the line without its duplicate
		// refuses it too.
		var p acp.Parser
		good := strings.Replace(strings.Replace(line, `"sessionId":"s2"`, `"other":"s2"`, 1), `"sessionI\u0064":"s2"`, `"other":"s2"`, 1)
		p.Parse([]byte(good))
		if _, err := p.Parse([]byte(line)); err == nil {
			t.Errorf("Parser.Parse(%s) after %s: no error", line, good)
		}
	}
	// The same names elsewhere are not duplicates of each other.
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"a","content":{"type":"text","text":"t"},"rawInput":{"text":"x","type":"y"}}}}`
	if _, err := acp.Parse([]byte(line)); err != nil {
		t.Errorf("Parse(%s): %v", line, err)
	}
}

// TestParseLocatesSessionUpdate: Parse finds the parts of a session/update
// in its one pass, as Members finds them level by level.
func TestParseLocatesSessionUpdate(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi \"x\""}}}}`,
		`{"params":{"update":{"messageId":"m","content":{"text":"a","type":"text","x":1},"sessionUpdate":"agent_thought_chunk","y":[]},"sessionId":"s","z":{}},"method":"session/update","jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":"text"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}`,
	} {
		env, err := acp.Parse([]byte(line))
		if err != nil {
			t.Fatalf("Parse(%s): %v", line, err)
		}
		if got, want := env.Update, updateByMembers([]byte(line), env.Params); got != want {
			t.Errorf("Update of %s = %+v, Members finds %+v", line, got, want)
		}
	}
	env, _ := acp.Parse([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`))
	if line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`; string(env.Update.Text.Bytes([]byte(line))) != `"hi"` || env.Update.ParamsOther || env.Update.UpdateOther || env.Update.ContentOther {
		t.Errorf("Update = %+v", env.Update)
	}
}

// FuzzValid: the fast validator the envelope parser uses agrees with
// encoding/json.Valid on every input (a differential fuzz test).
func FuzzValid(f *testing.F) {
	for _, tt := range parseTests {
		f.Add([]byte(tt.line))
	}
	for _, s := range []string{`1e999`, `"\ud800"`, "\"\x01\"", `[1,]`, `{"a":1,}`, `-`, `01`, `1.`, `.5`, `"\x"`, `tru`, `nul`, "\"\xff\"", ` {} `, `{} {}`, `[[[[]]]]`} {
		f.Add([]byte(s))
	}
	for _, n := range []int{10000, 10001} { // encoding/json's nesting limit
		f.Add([]byte(strings.Repeat("[", n) + strings.Repeat("]", n)))
		f.Add([]byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := acp.Valid(b), json.Valid(b); got != want {
			t.Fatalf("valid(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct{ v, want string }{
		{`{"a":1,"b":{"c":[{"d":1,"e":2}]}}`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"_meta":{"acpmux":{"x":1},"acpmux":{"y":2}}}`, "acpmux"},
		{`{"toolCall":{"rawInput":{"command":"rm -rf ~","command":"git status"}}}`, "command"},
		{`[{"k":1},{"k":2}]`, ""},
		{`[{"k":1,"\u006b":2}]`, "k"},
		{`{"a":"{\"a\":1,\"a\":2}"}`, ""},
	} {
		if got := acp.DuplicateKey([]byte(tc.v)); got != tc.want {
			t.Errorf("DuplicateKey(%s) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestDeepNestingIsRefusedNotACrash: a line nested millions of levels
// deep (a few megabytes of '[') is not JSON to the bridge, instead of
// overflowing the validator's stack and ending the process; the limit is
// encoding/json's.
func TestDeepNestingIsRefusedNotACrash(t *testing.T) {
	for _, tc := range []struct {
		depth int
		want  bool
	}{{acp.MaxDepth, true}, {acp.MaxDepth + 1, false}, {20_000_000, false}} {
		b := []byte(strings.Repeat("[", tc.depth) + strings.Repeat("]", tc.depth))
		if got := acp.Valid(b); got != tc.want {
			t.Errorf("depth %d: valid = %v, want %v", tc.depth, got, tc.want)
		}
		if tc.depth < 1_000_000 && json.Valid(b) != tc.want {
			t.Errorf("depth %d: encoding/json.Valid disagrees", tc.depth)
		}
		// Inside a message the params add one level.
		obj := []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":` + string(b[1:len(b)-1]) + `}`)
		if _, err := acp.Parse(obj); tc.want == (err != nil) {
			t.Errorf("depth %d: Parse error %v", tc.depth, err)
		}
	}
}
