package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/acpmux/acpmux/acp/acptest"
)

// teammateScript asks two permissions in one prompt turn; after reading
// each answer it sends a "doneN" update, so a test knows the agent has it.
// The command has a hidden character, so the decision carries two
// warnings (a write command; hidden characters).
const teammateScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"touch x","kind":"execute","rawInput":{"command":"touch x\u200b"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done1"}}}}
send {"jsonrpc":"2.0","id":"p2","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c2","title":"rm y","kind":"execute","rawInput":{"command":"rm y"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done2"}}}}
waiteof
`

// teammate is an "acpmux run --upstream" process, its agent's log and the
// ACP session its IDE opened.
type teammate struct {
	*runningRelay
	agentLog string
	sid      string
}

func wsURL(r *runningRelay) string { return "ws" + strings.TrimPrefix(r.apiURL, "http") + "/acp" }

// startLead runs "acpmux run --listen" over an agent that asks nothing.
func startLead(t *testing.T, flags ...string) (*runningRelay, string) {
	t.Helper()
	lead := startRelayProcess(t, "waiteof\n", append([]string{"--state", ":memory:"}, flags...)...)
	tokenFile := filepath.Join(t.TempDir(), "lead-token")
	os.WriteFile(tokenFile, []byte(lead.token), 0o600)
	return lead, tokenFile
}

// exampleAgent returns the argv of github.com/coder/acp-go-sdk's example
// agent (a real ACP agent that needs no model: each prompt turn streams
// text and tool calls, then asks one permission for an edit, options
// allow_once "allow" and reject_once "reject"), with everything acpmux
// writes to it appended to log: the answers it read.
func exampleAgent(t *testing.T, log string) []string {
	t.Helper()
	bin := buildExample(t, "github.com/coder/acp-go-sdk/example/agent", t.TempDir())
	return []string{"sh", "-c", `tee -a "$0" | exec "$1"`, log, bin}
}

// The example agent's next text after reading the answer to its
// permission request.
const (
	exampleAllowed  = "successfully updated the configuration"
	exampleRejected = "prefer not to make that change"
)

// startTeammate runs teammate name of lead over the acp-go-sdk example
// agent, waits until the lead has it, opens a session from the teammate's
// IDE and starts a prompt turn (id 3).
func startTeammate(t *testing.T, lead *runningRelay, tokenFile, name string, flags ...string) *teammate {
	t.Helper()
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	r := startRelayAgent(t, nil, exampleAgent(t, agentLog), nil,
		append([]string{"--state", ":memory:", "--upstream", wsURL(lead), "--upstream-token-file", tokenFile, "--name", name}, flags...)...)
	lead.waitLog(t, "teammate connected")
	return openExampleSession(t, r, agentLog)
}

// openExampleSession runs initialize, session/new and the first
// session/prompt (id 3) from r's IDE.
func openExampleSession(t *testing.T, r *runningRelay, agentLog string) *teammate {
	t.Helper()
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	res, _ := r.waitFor(t, "")["result"].(map[string]any)
	sid, _ := res["sessionId"].(string)
	if sid == "" {
		t.Fatal("session/new gave no sessionId")
	}
	tm := &teammate{r, agentLog, sid}
	tm.prompt(t, 3)
	return tm
}

// prompt starts a prompt turn with request id id from the IDE.
func (tm *teammate) prompt(t *testing.T, id int) {
	t.Helper()
	tm.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"session/prompt","params":{"sessionId":"`+tm.sid+`","prompt":[{"type":"text","text":"go"}]}}`)
}

// lead returns the session under which the lead lists tm's decisions.
func (tm *teammate) lead(name string) string { return "teammate:" + name + "/" + tm.sid }

// agentAnswers returns the outcome of every permission response the
// agent read ("selected:OPTIONID" or "cancelled:"), in order.
func agentAnswers(t *testing.T, agentLog string) []string {
	t.Helper()
	log, _ := os.ReadFile(agentLog)
	var out []string
	for _, l := range strings.Split(string(log), "\n") {
		var m struct {
			Method string
			Result *struct {
				Outcome *struct{ Outcome, OptionID string }
			}
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "" && m.Result != nil && m.Result.Outcome != nil {
			out = append(out, m.Result.Outcome.Outcome+":"+m.Result.Outcome.OptionID)
		}
	}
	return out
}

// permissionsOf reads r's IDE side until it has a permission request of
// each session in sids, in any order, and returns them raw by session.
func permissionsOf(t *testing.T, r *runningRelay, sids ...string) map[string]json.RawMessage {
	t.Helper()
	got := map[string]json.RawMessage{}
	for len(got) < len(sids) && r.out.Scan() {
		var m struct {
			Method string
			Params struct{ SessionID string }
		}
		json.Unmarshal(r.out.Bytes(), &m)
		if m.Method == "session/request_permission" && slices.Contains(sids, m.Params.SessionID) {
			got[m.Params.SessionID] = append(json.RawMessage(nil), r.out.Bytes()...)
		}
	}
	if len(got) < len(sids) {
		t.Fatalf("stdout closed with permission requests of %d of %v", len(got), sids)
	}
	return got
}

// permissionOf reads r's IDE side until a permission request of session
// sid and returns the whole message, raw.
func permissionOf(t *testing.T, r *runningRelay, sid string) json.RawMessage {
	t.Helper()
	for r.out.Scan() {
		var m struct {
			Method string
			Params struct{ SessionID string }
		}
		json.Unmarshal(r.out.Bytes(), &m)
		if m.Method == "session/request_permission" && m.Params.SessionID == sid {
			return append(json.RawMessage(nil), r.out.Bytes()...)
		}
	}
	t.Fatalf("stdout closed waiting for a permission request of %s", sid)
	return nil
}

// presentedMeta returns the id, decision id and raw warnings of a presented
// permission request.
func presentedMeta(t *testing.T, msg json.RawMessage) (id json.RawMessage, decision string, warnings json.RawMessage) {
	t.Helper()
	var m struct {
		ID     json.RawMessage
		Params struct {
			Meta struct {
				Acpmux struct {
					DecisionID string
					Warnings   json.RawMessage
				}
			} `json:"_meta"`
		}
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatal(err)
	}
	return m.ID, m.Params.Meta.Acpmux.DecisionID, m.Params.Meta.Acpmux.Warnings
}

// waitText reads r's IDE side until a line containing text.
func waitText(t *testing.T, r *runningRelay, text string) {
	t.Helper()
	for r.out.Scan() {
		if strings.Contains(r.out.Text(), text) {
			return
		}
	}
	t.Fatalf("stdout closed waiting for %q", text)
}

// waitTexts reads r's IDE side until each of texts was in a line, in any
// order.
func waitTexts(t *testing.T, r *runningRelay, texts ...string) {
	t.Helper()
	left := map[string]bool{}
	for _, x := range texts {
		left[x] = true
	}
	for len(left) > 0 && r.out.Scan() {
		for x := range left {
			if strings.Contains(r.out.Text(), x) {
				delete(left, x)
			}
		}
	}
	if len(left) > 0 {
		t.Fatalf("stdout closed waiting for %v", left)
	}
}

// agentGot returns the answer the agent read for its request id.
func agentGot(t *testing.T, agentLog, id string) string {
	t.Helper()
	log, _ := os.ReadFile(agentLog)
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, `"id":"`+id+`"`) && strings.Contains(l, `"result"`) {
			var m struct {
				Result struct {
					Outcome struct{ Outcome, OptionID string }
				}
			}
			json.Unmarshal([]byte(l[strings.Index(l, "{"):]), &m)
			return m.Result.Outcome.Outcome + ":" + m.Result.Outcome.OptionID
		}
	}
	return ""
}

// leadDecision waits (bounded) until the lead's API lists an open decision
// of session sid and returns it; query is added to the list's query.
func leadDecision(t *testing.T, lead *runningRelay, sid string, query ...string) (id string, warnings json.RawMessage) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var list struct {
			Decisions []struct {
				ID       string
				Warnings json.RawMessage
			}
		}
		if lead.get(t, "/v1/sessions/"+url.PathEscape(sid)+"/decisions?status=open"+strings.Join(query, ""), &list) == 200 && len(list.Decisions) > 0 {
			return list.Decisions[0].ID, list.Decisions[0].Warnings
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the lead's API lists no open decision of %s", sid)
	return "", nil
}

func apiAnswer(t *testing.T, r *runningRelay, sid, did, option string, query ...string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", r.apiURL+"/v1/sessions/"+url.PathEscape(sid)+"/decisions/"+did+strings.Join(query, ""), bytes.NewBufferString(`{"optionId":"`+option+`"}`))
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestTeammatesAnsweredAtLeadAPIAndIDE: a lead and two teammates, each an
// acpmux process over real WebSockets, each teammate over the acp-go-sdk
// example agent. Alice's confirmation is answered at the lead's decisions
// API, Bob's at the lead's IDE (its stdin and stdout); each answer reaches
// that teammate's agent once, the teammate's own IDE copy is withdrawn,
// and the warnings are byte-identical at the teammate's IDE, the lead's
// IDE and the lead's API.
func TestTeammatesAnsweredAtLeadAPIAndIDE(t *testing.T) {
	lead, tokenFile := startLead(t)
	alice := startTeammate(t, lead, tokenFile, "alice")
	bob := startTeammate(t, lead, tokenFile, "bob")

	_, aliceDID, aliceWarn := presentedMeta(t, permissionOf(t, alice.runningRelay, alice.sid))
	sid := alice.lead("alice")
	perms := permissionsOf(t, lead, sid, bob.lead("bob"))
	did, apiWarn := leadDecision(t, lead, sid)
	_, leadDID, leadWarn := presentedMeta(t, perms[sid])
	if leadDID != did {
		t.Fatalf("lead IDE decision %s, API %s", leadDID, did)
	}
	if len(aliceWarn) == 0 || !bytes.Equal(leadWarn, aliceWarn) || !bytes.Equal(apiWarn, aliceWarn) {
		t.Errorf("warnings differ:\nteammate IDE %s\nlead IDE     %s\nlead API     %s", aliceWarn, leadWarn, apiWarn)
	}
	if code := apiAnswer(t, lead, sid, did, "allow"); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	// The teammate's IDE copy lost (withdrawn); the agent's next update
	// may come before or after the withdrawal.
	waitTexts(t, alice.runningRelay, `"$/cancel_request"`, exampleAllowed)
	if got := agentAnswers(t, alice.agentLog); !slices.Equal(got, []string{"selected:allow"}) {
		t.Errorf("alice's agent read %q, want the lead's allow once", got)
	}
	var view struct{ ResolvedBy string }
	alice.get(t, "/v1/sessions/"+alice.sid+"/decisions/"+aliceDID, &view)
	if view.ResolvedBy != "upstream:alice" {
		t.Errorf("alice's decision resolved by %q, want upstream:alice", view.ResolvedBy)
	}

	id, _, _ := presentedMeta(t, perms[bob.lead("bob")])
	lead.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
	waitText(t, bob.runningRelay, exampleRejected)
	if got := agentAnswers(t, bob.agentLog); !slices.Equal(got, []string{"selected:reject"}) {
		t.Errorf("bob's agent read %q, want the lead IDE's reject once", got)
	}
}

// TestTeammateWarningsByteIdenticalAtEveryHop: a teammate's agent asks
// about a command with a hidden character (the example agent asks only
// about an edit, which carries no warning), so its decision has two
// warnings; they are byte-identical at the teammate's IDE, the lead's IDE
// and the lead's API, and the lead's answer reaches the agent.
func TestTeammateWarningsByteIdenticalAtEveryHop(t *testing.T) {
	lead, tokenFile := startLead(t)
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	alice := startRelayProcessEnv(t, teammateScript, []string{acptest.EnvLog + "=" + agentLog},
		"--state", ":memory:", "--upstream", wsURL(lead), "--upstream-token-file", tokenFile, "--name", "alice")
	lead.waitLog(t, "teammate connected")
	alice.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	alice.waitFor(t, "")
	alice.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	alice.waitFor(t, "")
	alice.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)

	_, _, aliceWarn := presentedMeta(t, permissionOf(t, alice, "s1"))
	if !bytes.Contains(aliceWarn, []byte("hidden characters")) || !bytes.Contains(aliceWarn, []byte("can change files")) {
		t.Fatalf("teammate's warnings %s", aliceWarn)
	}
	sid := "teammate:alice/s1"
	did, apiWarn := leadDecision(t, lead, sid)
	_, _, leadWarn := presentedMeta(t, permissionOf(t, lead, sid))
	if !bytes.Equal(leadWarn, aliceWarn) || !bytes.Equal(apiWarn, aliceWarn) {
		t.Errorf("warnings differ:\nteammate IDE %s\nlead IDE     %s\nlead API     %s", aliceWarn, leadWarn, apiWarn)
	}
	if code := apiAnswer(t, lead, sid, did, "allow"); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	waitText(t, alice, "done1")
	if got := agentGot(t, agentLog, "p1"); got != "selected:allow" {
		t.Errorf("alice's agent got %q, want the lead's allow", got)
	}
}

// wsClient connects to the lead's /acp as a raw client.
func wsClient(t *testing.T, lead *runningRelay) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, wsURL(lead), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + lead.token}}, Subprotocols: []string{"acp"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// call sends msg on c and returns the response with id, failing if a
// permission request arrives first.
func call(t *testing.T, c *websocket.Conn, msg, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "session/request_permission") {
			t.Fatalf("a teammate connection was shown a permission request: %s", data)
		}
		if strings.Contains(string(data), `"id":`+id+`,`) {
			return string(data)
		}
	}
}

// TestTeammateCannotTakeSeeOrAnswerAnothers: while alice (over the
// acp-go-sdk example agent) is connected,
// another connection cannot say hello as alice; a second teammate
// (mallory) is never shown alice's decision, and its forged responses,
// its ask and its withdraw in alice's name change nothing: the decision
// stays open at the lead until the lead's API answers it.
func TestTeammateCannotTakeSeeOrAnswerAnothers(t *testing.T) {
	lead, tokenFile := startLead(t)
	alice := startTeammate(t, lead, tokenFile, "alice")
	_, aliceDID, _ := presentedMeta(t, permissionOf(t, alice.runningRelay, alice.sid))
	sid := alice.lead("alice")
	did, _ := leadDecision(t, lead, sid)

	m := wsClient(t, lead)
	if r := call(t, m, `{"jsonrpc":"2.0","id":1,"method":"_acpmux/teammate/hello","params":{"teammate":"alice"}}`, "1"); !strings.Contains(r, `"error"`) || !strings.Contains(r, "taken") {
		t.Errorf("hello as a connected teammate's name: %s", r)
	}
	if r := call(t, m, `{"jsonrpc":"2.0","id":2,"method":"_acpmux/teammate/hello","params":{"teammate":"mallory"}}`, "2"); !strings.Contains(r, `"result":{}`) {
		t.Fatalf("hello as mallory: %s", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, forged := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`,
		`{"jsonrpc":"2.0","method":"_acpmux/teammate/withdraw","params":{"teammate":"alice","sessionId":"` + alice.sid + `","decisionId":"` + aliceDID + `"}}`,
	} {
		m.Write(ctx, websocket.MessageText, []byte(forged))
	}
	ask := `{"jsonrpc":"2.0","id":3,"method":"_acpmux/teammate/ask","params":{"teammate":"alice","sessionId":"` + alice.sid + `","decisionId":"` + aliceDID +
		`","title":"touch x","warnings":[],"cwd":"/tmp","options":[{"optionId":"allow","name":"Allow","kind":"allow_once"}],"displayedTextSha256":"00","timeoutMs":1000}}`
	if r := call(t, m, ask, "3"); !strings.Contains(r, `"error"`) {
		t.Errorf("an ask in another teammate's name: %s", r)
	}
	var view struct{ Status string }
	if lead.get(t, "/v1/sessions/"+url.PathEscape(sid)+"/decisions/"+did, &view); view.Status != "open" {
		t.Fatalf("after mallory's attempts alice's decision at the lead is %q, want open", view.Status)
	}
	if code := apiAnswer(t, lead, sid, did, "reject"); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	waitText(t, alice.runningRelay, exampleRejected)
	if got := agentAnswers(t, alice.agentLog); !slices.Equal(got, []string{"selected:reject"}) {
		t.Errorf("alice's agent read %q, want the lead's reject once", got)
	}
	// Ordered after everything the lead sent mallory: still no request.
	call(t, m, `{"jsonrpc":"2.0","id":4,"method":"_acpmux/teammate/hello","params":{"teammate":"mallory"}}`, "4")
}

// fakeLead is a WebSocket server that plays a lead which answers each
// ask with answer(ask params), and records the withdrawals it gets.
func fakeLead(t *testing.T, answer func(ask map[string]any) string) (wsURL, tokenFile string, withdrawn <-chan string) {
	t.Helper()
	wd := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"acp"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage
				Method string
				Params map[string]any
			}
			json.Unmarshal(data, &m)
			switch m.Method {
			case "_acpmux/teammate/hello":
				c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`))
			case "_acpmux/teammate/ask":
				if res := answer(m.Params); res != "" {
					c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+res+`}`))
				}
			case "_acpmux/teammate/withdraw":
				wd <- m.Params["decisionId"].(string)
			}
		}
	}))
	t.Cleanup(srv.Close)
	tokenFile = filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("t"), 0o600)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/acp", tokenFile, wd
}

// TestTeammateRefusesForgedUpstreamAnswers: the teammate's own broker
// validates what the lead sends. Over the acp-go-sdk example agent, in
// two prompt turns: an unoffered optionId and an answer for another
// snapshot (displayedTextSha256) never reach the agent: the decision stays
// open for the teammate's IDE, whose reject is delivered, and the journal
// names the refused answer.
func TestTeammateRefusesForgedUpstreamAnswers(t *testing.T) {
	var asks atomic.Int32
	url, tokenFile, withdrawn := fakeLead(t, func(ask map[string]any) string {
		if asks.Add(1) == 1 {
			return `{"outcome":{"outcome":"selected","optionId":"yolo"},"displayedTextSha256":"` + ask["displayedTextSha256"].(string) + `"}`
		}
		return `{"outcome":{"outcome":"selected","optionId":"allow"},"displayedTextSha256":"0000"}`
	})
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	r := startRelayAgent(t, nil, exampleAgent(t, agentLog), nil,
		"--state", ":memory:", "--upstream", url, "--upstream-token-file", tokenFile, "--name", "alice")
	r.waitLog(t, "upstream: connected to the lead")
	tm := openExampleSession(t, r, agentLog)
	for i, want := range []string{"invalid_answer", "another snapshot"} {
		if i > 0 {
			tm.prompt(t, 3+i)
		}
		id, did, _ := presentedMeta(t, permissionOf(t, r, tm.sid))
		r.waitLog(t, "upstream: no answer from the lead") // the lead's answer was refused
		var view struct {
			Status string
			Events []struct{ Type, Host, Detail string }
		}
		r.get(t, "/v1/sessions/"+tm.sid+"/decisions/"+did, &view)
		journal, _ := json.Marshal(view.Events)
		if view.Status != "open" || !strings.Contains(string(journal), want) {
			t.Errorf("turn %d after the forged answer: status %s, journal %s; want open with %q", i+1, view.Status, journal, want)
		}
		r.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
		waitText(t, r, exampleRejected)
		waitText(t, r, `"stopReason"`)
		if got := agentAnswers(t, agentLog); len(got) != i+1 || got[i] != "selected:reject" {
			t.Errorf("turn %d: the agent read %q, want the IDE's reject", i+1, got)
		}
	}
	select {
	case d := <-withdrawn:
		t.Errorf("withdrawn %s although the lead's copy had abstained", d)
	default:
	}
}

// TestTeammateUpstreamLostMidDecision: the lead is killed while it shows
// two teammates' confirmations (each over the acp-go-sdk example agent).
// Alice's IDE still answers hers (allow is delivered); Carol, headless,
// has no local host that answers: her decision waits and fails closed at
// its timeout with the reject option.
func TestTeammateUpstreamLostMidDecision(t *testing.T) {
	lead, tokenFile := startLead(t)
	alice := startTeammate(t, lead, tokenFile, "alice")
	carol := startTeammate(t, lead, tokenFile, "carol", "--headless", "--decision-timeout", "4s")
	id, _, _ := presentedMeta(t, permissionOf(t, alice.runningRelay, alice.sid))
	permissionsOf(t, lead, alice.lead("alice"), carol.lead("carol"))
	lead.cmd.Process.Signal(syscall.SIGKILL)
	lead.cmd.Wait()
	alice.waitLog(t, "upstream: not connected to the lead")

	alice.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`)
	waitText(t, alice.runningRelay, exampleAllowed)
	if got := agentAnswers(t, alice.agentLog); !slices.Equal(got, []string{"selected:allow"}) {
		t.Errorf("alice's agent read %q, want her IDE's allow", got)
	}
	waitText(t, carol.runningRelay, exampleRejected)
	if got := agentAnswers(t, carol.agentLog); !slices.Equal(got, []string{"selected:reject"}) {
		t.Errorf("carol's agent read %q, want the reject option at the timeout", got)
	}
}

// TestTeammateReoffersAfterReconnectAndIgnoresLateAnswers: the lead drops
// the connection on the first ask; the teammate (over the acp-go-sdk
// example agent) reconnects (backoff) and offers the same decision again,
// whose allow is delivered once. The next turn's decision is answered
// first by the teammate's IDE: the lead gets _acpmux/teammate/withdraw,
// and the allow it sends afterwards (stale) is not delivered.
func TestTeammateReoffersAfterReconnectAndIgnoresLateAnswers(t *testing.T) {
	type askMsg struct {
		id  string
		did string
		sha string
	}
	asks := make(chan askMsg, 16)
	var conns atomic.Int32
	var firstDID atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"acp"}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		first := conns.Add(1) == 1
		ctx := context.Background()
		var held *askMsg
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage
				Method string
				Params struct{ DecisionID, Title, DisplayedTextSha256 string }
			}
			json.Unmarshal(data, &m)
			switch m.Method {
			case "_acpmux/teammate/hello":
				c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`))
			case "_acpmux/teammate/ask":
				a := askMsg{string(m.ID), m.Params.DecisionID, m.Params.DisplayedTextSha256}
				asks <- a
				firstDID.CompareAndSwap(nil, a.did)
				switch {
				case first:
					return // the lead goes away mid-decision
				case a.did == firstDID.Load():
					res := `{"outcome":{"outcome":"selected","optionId":"allow"},"displayedTextSha256":"` + a.sha + `"}`
					c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+a.id+`,"result":`+res+`}`))
				default:
					held = &a
				}
			case "_acpmux/teammate/withdraw":
				if held != nil && m.Params.DecisionID == held.did {
					res := `{"outcome":{"outcome":"selected","optionId":"allow"},"displayedTextSha256":"` + held.sha + `"}`
					c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":`+held.id+`,"result":`+res+`}`))
					asks <- askMsg{id: "withdrawn", did: held.did}
				}
			}
		}
	}))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("t"), 0o600)
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	r := startRelayAgent(t, nil, exampleAgent(t, agentLog), nil,
		"--state", ":memory:", "--upstream", "ws"+strings.TrimPrefix(srv.URL, "http")+"/acp", "--upstream-token-file", tokenFile, "--name", "alice")
	tm := openExampleSession(t, r, agentLog)
	next := func() askMsg {
		select {
		case a := <-asks:
			return a
		case <-time.After(20 * time.Second):
			t.Fatal("the lead got no ask")
			return askMsg{}
		}
	}
	a1, a2 := next(), next()
	if a1.did == "" || a2.did != a1.did {
		t.Fatalf("after the reconnect the lead was offered %q, before %q; want the same decision", a2.did, a1.did)
	}
	waitText(t, r, exampleAllowed)
	waitText(t, r, `"stopReason"`)
	if got := agentAnswers(t, agentLog); !slices.Equal(got, []string{"selected:allow"}) {
		t.Errorf("turn 1: the agent read %q, want the lead's allow once", got)
	}
	tm.prompt(t, 4)
	id, _, _ := presentedMeta(t, permissionOf(t, r, tm.sid))
	next() // the lead holds the ask of turn 2
	r.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
	if w := next(); w.id != "withdrawn" {
		t.Fatalf("want the lead to get a withdraw, got %+v", w)
	}
	waitText(t, r, exampleRejected)
	waitText(t, r, `"stopReason"`)
	if got := agentAnswers(t, agentLog); !slices.Equal(got, []string{"selected:allow", "selected:reject"}) {
		t.Errorf("the agent read %q, want the lead's allow, then the IDE's reject, never the lead's late allow", got)
	}
}

// TestTeammateLeadRestartsWithDurableStore: the lead (SQLite --state file)
// is killed while it shows a teammate's confirmation and started again on
// the same address, store and token. The teammate (over the acp-go-sdk
// example agent) reconnects and offers the decision again; the restarted
// lead opens it anew (its old copy is closed bridge_restart and cannot be
// answered), its API's allow reaches the agent, and the agent reads one
// answer only: a second answer at the lead is refused. (Both runs of the
// lead used the session in the one store, so the API is asked with
// ?bridge=, docs/inbox.md.)
func TestTeammateLeadRestartsWithDurableStore(t *testing.T) {
	dir := t.TempDir()
	flags := []string{"--state", filepath.Join(dir, "lead.db"), "--listen", "127.0.0.1:" + strconv.Itoa(freePort(t)), "--token-file", filepath.Join(dir, "token")}
	lead, tokenFile := startLead(t, flags...)
	oldBridge := "?bridge=" + bridgeIDRe.FindStringSubmatch(lead.waitLog(t, "bridge registered"))[1]
	alice := startTeammate(t, lead, tokenFile, "alice")
	sid := alice.lead("alice")
	old, _ := leadDecision(t, lead, sid)
	permissionOf(t, lead, sid) // presented: in the store by now
	lead.cmd.Process.Signal(syscall.SIGKILL)
	lead.cmd.Wait()
	alice.waitLog(t, "upstream: not connected to the lead")

	lead, _ = startLead(t, flags...)
	bridge := "?bridge=" + bridgeIDRe.FindStringSubmatch(lead.waitLog(t, "bridge registered"))[1]
	lead.waitLog(t, "teammate connected")
	did, _ := leadDecision(t, lead, sid, "&"+bridge[1:])
	if did == old {
		t.Fatalf("the restarted lead reopened decision %s of its previous run", old)
	}
	var view map[string]any
	if code := lead.get(t, "/v1/sessions/"+url.PathEscape(sid)+"/decisions/"+old+oldBridge, &view); view["status"] != "cancelled" || view["reason"] != "bridge_restart" {
		t.Errorf("the previous run's decision: %d %v, want cancelled bridge_restart", code, view)
	}
	if code := apiAnswer(t, lead, sid, old, "allow", oldBridge); code == 200 {
		t.Errorf("an answer to the previous run's decision was accepted")
	}
	if code := apiAnswer(t, lead, sid, did, "allow", bridge); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	waitText(t, alice.runningRelay, exampleAllowed)
	if code := apiAnswer(t, lead, sid, did, "reject", bridge); code == 200 {
		t.Errorf("a second answer to the same decision was accepted")
	}
	waitText(t, alice.runningRelay, `"stopReason"`)
	if got := agentAnswers(t, alice.agentLog); !slices.Equal(got, []string{"selected:allow"}) {
		t.Errorf("alice's agent read %q, want the restarted lead's allow once", got)
	}
}

// bridgeIDRe finds the bridge id in acpmux's "bridge registered in the
// shared store" log line.
var bridgeIDRe = regexp.MustCompile(`bridge=([0-9a-f-]{36})`)
