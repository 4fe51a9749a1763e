package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/acpmux/acpmux/acp/acptest"
)

// runCLI runs acpmux in-process and returns its exit status and output.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, stdio{strings.NewReader(""), &out, &errb})
	return code, out.String(), errb.String()
}

// addToken runs acpmux token add and returns the token it printed.
func addToken(t *testing.T, state, name, role string) string {
	t.Helper()
	code, out, errs := runCLI("token", "add", name, "--role", role, "--state", state)
	if code != 0 || !regexp.MustCompile(`^[0-9a-f]{64}\n$`).MatchString(out) {
		t.Fatalf("token add %s: %d %q %s", name, code, out, errs)
	}
	return strings.TrimSpace(out)
}

// TestTokenCommand: add prints the token alone on stdout and stores only
// its hash; a second token for a name, an unknown role, a reserved name and
// a bad --expires are refused; revoke works once; list shows each state.
func TestTokenCommand(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	tok := addToken(t, state, "alice", "approver")
	if code, _, errs := runCLI("token", "add", "alice", "--role", "admin", "--state", state); code != 1 || !strings.Contains(errs, "revoke it first") {
		t.Errorf("second token of alice: %d %s", code, errs)
	}
	for _, args := range [][]string{{"add", "bob", "--role", "root"}, {"add", "token-file", "--role", "admin"},
		{"add", "bob", "--role", "observer", "--expires", "soon"}, {"add", "b b", "--role", "observer"}, {"frob"}} {
		if code, _, _ := runCLI(append(append([]string{"token"}, args...), "--state", state)...); code != 2 {
			t.Errorf("token %v: exit %d, want 2", args, code)
		}
	}
	if code, _, errs := runCLI("token", "add", "--role", "observer", "bob", "--expires", "30d", "--state", state); code != 0 {
		t.Fatalf("flags before the name: %d %s", code, errs)
	}
	if code, _, _ := runCLI("token", "revoke", "alice", "--state", state); code != 0 {
		t.Fatal("revoke failed")
	}
	if code, _, errs := runCLI("token", "revoke", "alice", "--state", state); code != 1 || !strings.Contains(errs, "no token") {
		t.Errorf("second revoke: %d %s", code, errs)
	}
	_, list, _ := runCLI("token", "list", "--state", state)
	if !regexp.MustCompile(`alice +approver .* never +revoked`).MatchString(list) || !regexp.MustCompile(`bob +observer .* active`).MatchString(list) {
		t.Errorf("list:\n%s", list)
	}
	_, js, _ := runCLI("token", "list", "--json", "--state", state)
	if strings.Contains(js, tok) || !strings.Contains(js, `"revokedAt"`) || !strings.Contains(js, `"expiresAt"`) {
		t.Errorf("list --json (must not hold the token):\n%s", js)
	}
}

const peopleAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}
waiteof
`

// wsAs connects to r's /acp with tok.
func wsAs(t *testing.T, r *runningRelay, tok string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL(r), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}, Subprotocols: []string{"acp"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// wsRequest sends msg and returns the first message that is the response
// with id or has the method want.
func wsRequest(t *testing.T, c *websocket.Conn, msg, id, want string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if msg != "" {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %s/%s: %v", id, want, err)
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		if want != "" && m["method"] == want {
			return m
		}
		if m["method"] == nil && id != "" {
			if raw, _ := json.Marshal(m["id"]); string(raw) == id {
				return m
			}
		}
	}
}

func rpcCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// TestPeopleOnACPWebSocket: on /acp an observer can initialize and
// attach but not create a session or prompt (-32094), and is not shown
// the permission request; an approver's answer there counts as their own
// vote whatever person its _meta names; a second approver through the API
// completes the quorum of two and the agent gets one answer. acpmux audit
// verify accepts the chain, then finds the journal row changed with SQL.
func TestPeopleOnACPWebSocket(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	toks := map[string]string{}
	for name, role := range map[string]string{"olga": "observer", "alice": "approver", "bob": "approver"} {
		toks[name] = addToken(t, state, name, role)
	}
	pol := filepath.Join(dir, "policy.toml")
	os.WriteFile(pol, []byte("[[rule]]\nname = 'two'\ndecision = 'ask'\ncommand = 'touch *'\napprovers = ['alice', 'bob']\nquorum = 2\n"), 0o600)
	agentLog := filepath.Join(dir, "agent.ndjson")
	r := startRelayProcessEnv(t, peopleAgentScript, []string{acptest.EnvLog + "=" + agentLog}, "--state", state, "--policy", pol)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	r.waitFor(t, "")

	olga := wsAs(t, r, toks["olga"])
	if m := wsRequest(t, olga, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, "1", ""); m["result"] == nil {
		t.Fatalf("observer initialize: %v", m)
	}
	for i, msg := range []string{`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`} {
		if m := wsRequest(t, olga, msg, string(rune('2'+i)), ""); rpcCode(m) != -32094 {
			t.Fatalf("observer request %d: %v, want -32094", i, m)
		}
	}
	if m := wsRequest(t, olga, `{"jsonrpc":"2.0","id":4,"method":"session/attach","params":{"sessionId":"s1","historyPolicy":"none"}}`, "4", ""); m["result"] == nil {
		t.Fatalf("observer attach: %v", m)
	}

	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	r.waitFor(t, "session/request_permission")
	alice := wsAs(t, r, toks["alice"])
	wsRequest(t, alice, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, "1", "")
	perm := wsRequest(t, alice, `{"jsonrpc":"2.0","id":2,"method":"session/attach","params":{"sessionId":"s1","historyPolicy":"pending_only"}}`, "", "session/request_permission")
	pid, _ := json.Marshal(perm["id"])
	forged := `{"jsonrpc":"2.0","id":` + string(pid) + `,"result":{"outcome":{"outcome":"selected","optionId":"allow"},"_meta":{"acpmux":{"person":"bob"},"person":"bob"}}}`
	if err := alice.Write(context.Background(), websocket.MessageText, []byte(forged)); err != nil {
		t.Fatal(err)
	}
	meta := perm["params"].(map[string]any)["_meta"].(map[string]any)["acpmux"].(map[string]any)
	did := meta["decisionId"].(string)
	var v struct {
		Status     string
		AnsweredBy string
		Events     []struct{ Type, Host, Person string }
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r.get(t, "/v1/sessions/s1/decisions/"+did, &v)
		if len(v.Events) > 0 && v.Events[len(v.Events)-1].Type == "vote" || time.Now().After(deadline) {
			break
		}
	}
	if last := v.Events[len(v.Events)-1]; last.Type != "vote" || last.Person != "alice" || v.Status != "open" {
		t.Fatalf("alice's answer on /acp: %+v, want her vote, still open", v)
	}
	body := strings.NewReader(`{"optionId":"allow"}`)
	req, _ := http.NewRequest("POST", r.apiURL+"/v1/sessions/s1/decisions/"+did, body)
	req.Header.Set("Authorization", "Bearer "+toks["bob"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if resp.StatusCode != 200 || v.AnsweredBy != "bob" {
		t.Fatalf("bob's API answer: %d %+v", resp.StatusCode, v)
	}
	r.waitFor(t, "session/update")
	if got := agentGot(t, agentLog, "p1"); got != "selected:allow" {
		t.Fatalf("agent got %q", got)
	}
	var presented []string
	for _, ev := range v.Events {
		if ev.Type == "presented" && strings.HasPrefix(ev.Host, "ws-") {
			presented = append(presented, ev.Host)
		}
	}
	if len(presented) != 1 { // alice's connection, never olga's
		t.Errorf("presented to WebSocket hosts %v, want alice's only", presented)
	}

	if code, out, errs := runCLI("audit", "verify", "--state", state); code != 0 || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("audit verify: %d %s %s", code, out, errs)
	}
	db, err := sql.Open("sqlite", state)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE decision_events SET person = 'mallory' WHERE decision_id = ? AND type = 'answered'`, did); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI("audit", "verify", "--state", state); code != 1 || !strings.Contains(out, "row changed") || !strings.Contains(out, "decision="+did) {
		t.Fatalf("audit verify after an edit: %d %s", code, out)
	}
}

// postAs answers decision did of session sid through the API with tok.
func postAs(t *testing.T, r *runningRelay, tok, sid, did, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", r.apiURL+"/v1/sessions/"+sid+"/decisions/"+did, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestControllerPromptsAndMayNotApproveOwnRequest: a controller on /acp
// creates a session and prompts; the permission request of that turn
// names them as requester, so under requester_may_approve = false their
// own answer is 403 while an approver's is accepted.
func TestControllerPromptsAndMayNotApproveOwnRequest(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	carl, alice := addToken(t, state, "carl", "controller"), addToken(t, state, "alice", "approver")
	pol := filepath.Join(dir, "policy.toml")
	os.WriteFile(pol, []byte("[[rule]]\nname = 'not-own'\ndecision = 'ask'\ncommand = 'touch *'\nrequester_may_approve = false\n"), 0o600)
	agentLog := filepath.Join(dir, "agent.ndjson")
	r := startRelayProcessEnv(t, peopleAgentScript, []string{acptest.EnvLog + "=" + agentLog}, "--state", state, "--policy", pol)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	c := wsAs(t, r, carl)
	wsRequest(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, "1", "")
	if m := wsRequest(t, c, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`, "2", ""); m["result"] == nil {
		t.Fatalf("controller session/new: %v", m)
	}
	perm := wsRequest(t, c, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`, "", "session/request_permission")
	did := perm["params"].(map[string]any)["_meta"].(map[string]any)["acpmux"].(map[string]any)["decisionId"].(string)
	if code, m := postAs(t, r, carl, "s1", did, `{"optionId":"allow"}`); code != 403 || !strings.Contains(errMessage(m), "sent the prompt") {
		t.Fatalf("the requester's own answer: %d %v, want 403", code, m)
	}
	if code, m := postAs(t, r, alice, "s1", did, `{"optionId":"allow"}`); code != 200 || m["answeredBy"] != "alice" {
		t.Fatalf("an approver's answer: %d %v", code, m)
	}
	wsRequest(t, c, "", "", "session/update")
	if got := agentGot(t, agentLog, "p1"); got != "selected:allow" {
		t.Fatalf("agent got %q", got)
	}
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}
