package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/confirm/store"
)

const recordAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}}}
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
waiteof
`

// TestRecordTranscriptBothWaysRedacted runs "acpmux run --record FILE"
// with a scripted agent: the transcript has every message both ways (the
// IDE's as from_host/to_host of host "stdio", the agent's as
// from_agent/to_agent of "agent"), each with a time; the MCP server's
// Authorization header, its env token, a _meta token and the --listen
// bearer token (the token file's contents) never appear in it; acpmux
// replay prints it with arrows, methods, ids and summaries.
func TestRecordTranscriptBothWaysRedacted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.ndjson")
	r := startRelayProcess(t, recordAgentScript, "--state", ":memory:", "--record", path)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"x-api-token":"meta-secret-1"}}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[`+
		`{"type":"http","name":"gh","url":"https://mcp.example/","headers":[{"name":"Authorization","value":"Bearer header-secret-2"}]},`+
		`{"name":"fs","command":"mcp-fs","args":[],"env":[{"name":"GITHUB_TOKEN","value":"env-secret-3"}]}]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"my token is `+r.token+`"}]}}`)
	r.waitFor(t, "")
	r.stdin.Close()
	r.cmd.Wait()

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"meta-secret-1", "header-secret-2", "env-secret-3", r.token} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the transcript holds the secret %q:\n%s", secret, data)
		}
	}
	seen := map[string]int{} // dir/host/method-or-response
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var e bridge.RecordEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if e.Time.IsZero() || e.Msg == nil {
			t.Errorf("entry without a time or a message: %s", sc.Text())
		}
		var m struct{ Method string }
		json.Unmarshal(e.Msg, &m)
		seen[string(e.Dir)+"/"+e.Host+"/"+m.Method]++
		if e.Dir == bridge.ToAgent && m.Method == "session/new" && !strings.Contains(string(e.Msg), `{"name":"Authorization","value":"[redacted]"}`) {
			t.Errorf("the Authorization header is not redacted as such: %s", e.Msg)
		}
	}
	for _, want := range []string{
		"from_host/stdio/initialize", "to_agent/agent/initialize", "from_agent/agent/", "to_host/stdio/",
		"from_host/stdio/session/new", "to_agent/agent/session/new",
		"from_host/stdio/session/prompt", "to_agent/agent/session/prompt",
		"from_agent/agent/session/update", "to_host/stdio/session/update",
	} {
		if seen[want] == 0 {
			t.Errorf("no %s entry; have %v", want, seen)
		}
	}

	var out, errb strings.Builder
	if code := Main([]string{"replay", path}, stdio{strings.NewReader(""), &out, &errb}); code != 0 {
		t.Fatalf("acpmux replay: %d %s", code, errb.String())
	}
	t.Logf("acpmux replay:\n%s", out.String())
	for _, want := range []string{
		"stdio → acpmux", "acpmux → agent", "agent → acpmux", "acpmux → stdio",
		"request #1 initialize", "request #2 session/new", "notification session/update  session=s1 agent_message_chunk \"hello\"",
		"stopReason=end_turn", "session=s1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("replay output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := Main([]string{"replay", "--json", path}, stdio{strings.NewReader(""), &out, &errb}); code != 0 || strings.Count(out.String(), "\n") != strings.Count(string(data), "\n") {
		t.Fatalf("replay --json: %d, %d lines for %d entries", code, strings.Count(out.String(), "\n"), strings.Count(string(data), "\n"))
	}
}

// TestReplayRefusesANonTranscript: a line that is no entry is an error
// that names it (exit 1).
func TestReplayRefusesANonTranscript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x")
	os.WriteFile(path, []byte(`{"time":"2026-07-01T00:00:00Z","dir":"to_agent","host":"agent","msg":{}}`+"\nhello\n"), 0o600)
	var out, errb strings.Builder
	if code := Main([]string{"replay", path}, stdio{strings.NewReader(""), &out, &errb}); code != 1 || !strings.Contains(errb.String(), "line 2") {
		t.Fatalf("replay: %d %q", code, errb.String())
	}
}

// TestRecordKeepsTheLastAnswerWhenTheIDEKillsAcpmux: an IDE that kills
// acpmux (SIGKILL, as acp-go-sdk's example client does) as soon as it has
// read the prompt turn's response still finds the agent's last chunk and
// that response in the transcript, in each of 20 runs.
func TestRecordKeepsTheLastAnswerWhenTheIDEKillsAcpmux(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 3
	}
	for i := range runs {
		path := filepath.Join(t.TempDir(), "session.ndjson")
		r := startRelayProcess(t, recordAgentScript, "--state", ":memory:", "--record", path)
		r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		r.waitFor(t, "")
		r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
		r.waitFor(t, "")
		r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}`)
		r.waitFor(t, "")
		r.cmd.Process.Kill()
		r.cmd.Wait()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var chunk, end bool
		for line := range strings.Lines(string(data)) {
			var e bridge.RecordEntry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("run %d: line %q: %v", i, line, err)
			}
			if e.Dir != bridge.ToHost {
				continue
			}
			chunk = chunk || strings.Contains(string(e.Msg), `"agent_message_chunk"`)
			end = end || strings.Contains(string(e.Msg), `"stopReason":"end_turn"`)
		}
		if !chunk || !end {
			t.Fatalf("run %d: the transcript lacks the last chunk (%v) or the end_turn response (%v) sent to the IDE:\n%s", i, chunk, end, data)
		}
	}
}

// TestRecordRedactsPersonTokensAndTokensAsMemberNames: a per-person token
// (acpmux token add; the store has only its hash) in prompt text and in a
// log line, and the --token-file token used as a member name, never
// appear in the transcript.
func TestRecordRedactsPersonTokensAndTokensAsMemberNames(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	alice := addToken(t, state, "alice", "admin")
	path := filepath.Join(dir, "session.ndjson")
	r := startRelayProcess(t, recordAgentScript, "--state", state, "--record", path)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"`+r.token+`":true}}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"alice's token:`+alice+`."}]}}`)
	r.waitFor(t, "")
	r.stdin.Close()
	r.cmd.Wait()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{"alice's token": alice, "the --token-file token": r.token} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the transcript holds %s:\n%s", name, data)
		}
	}
	if !bytes.Contains(data, []byte(`alice's token:[redacted].`)) {
		t.Errorf("the prompt text is not redacted in place:\n%s", data)
	}
}

// TestPersonTokensRereadOnAMissAtMostEveryFewSeconds: a token added after
// the hashes were read is recognised once tokenRefreshEvery has passed
// since the last read; before that a miss does not read the store again.
func TestPersonTokensRereadOnAMissAtMostEveryFewSeconds(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	alice := addToken(t, state, "alice", "admin")
	st, err := openState(state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1000, 0)
	p := &personTokens{people: st.(store.People), now: func() time.Time { return now }}
	if !p.isToken(alice) {
		t.Fatal("alice's token is not recognised")
	}
	bob := addToken(t, state, "bob", "observer")
	now = now.Add(tokenRefreshEvery / 2)
	if p.isToken(bob) {
		t.Fatal("the store was read again before tokenRefreshEvery")
	}
	now = now.Add(tokenRefreshEvery)
	if !p.isToken(bob) {
		t.Fatal("bob's token is not recognised after tokenRefreshEvery")
	}
	if p.isToken(strings.Repeat("0", 64)) {
		t.Fatal("a 64-digit string that is no token is recognised")
	}
}
