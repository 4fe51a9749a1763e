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

// teammate is an "acpmux run --upstream" process and its agent's log.
type teammate struct {
	*runningRelay
	agentLog string
}

func wsURL(r *runningRelay) string { return "ws" + strings.TrimPrefix(r.apiURL, "http") + "/acp" }

// startLead runs "acpmux run --listen" over an agent that asks nothing.
func startLead(t *testing.T) (*runningRelay, string) {
	t.Helper()
	lead := startRelayProcess(t, "waiteof\n", "--state", ":memory:")
	tokenFile := filepath.Join(t.TempDir(), "lead-token")
	os.WriteFile(tokenFile, []byte(lead.token), 0o600)
	return lead, tokenFile
}

// startTeammate runs teammate name of lead, waits until the lead has it,
// and starts the agent's prompt turn from the teammate's IDE.
func startTeammate(t *testing.T, lead *runningRelay, tokenFile, name string, flags ...string) *teammate {
	t.Helper()
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	r := startRelayProcessEnv(t, teammateScript, []string{acptest.EnvLog + "=" + agentLog},
		append([]string{"--state", ":memory:", "--upstream", wsURL(lead), "--upstream-token-file", tokenFile, "--name", name}, flags...)...)
	lead.waitLog(t, "teammate connected")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	return &teammate{r, agentLog}
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
// of session sid and returns it.
func leadDecision(t *testing.T, lead *runningRelay, sid string) (id string, warnings json.RawMessage) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var list struct {
			Decisions []struct {
				ID       string
				Warnings json.RawMessage
			}
		}
		if lead.get(t, "/v1/sessions/"+url.PathEscape(sid)+"/decisions?status=open", &list) == 200 && len(list.Decisions) > 0 {
			return list.Decisions[0].ID, list.Decisions[0].Warnings
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the lead's API lists no open decision of %s", sid)
	return "", nil
}

func apiAnswer(t *testing.T, r *runningRelay, sid, did, option string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", r.apiURL+"/v1/sessions/"+url.PathEscape(sid)+"/decisions/"+did, bytes.NewBufferString(`{"optionId":"`+option+`"}`))
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
// acpmux process over real WebSockets. Alice's confirmation is answered at
// the lead's decisions API, Bob's at the lead's IDE (its stdin and
// stdout); each answer reaches that teammate's agent, the teammate's own
// IDE copy is withdrawn, and the warnings are byte-identical at the
// teammate's IDE, the lead's IDE and the lead's API.
func TestTeammatesAnsweredAtLeadAPIAndIDE(t *testing.T) {
	lead, tokenFile := startLead(t)
	alice := startTeammate(t, lead, tokenFile, "alice")
	bob := startTeammate(t, lead, tokenFile, "bob")

	_, aliceDID, aliceWarn := presentedMeta(t, permissionOf(t, alice.runningRelay, "s1"))
	if !bytes.Contains(aliceWarn, []byte("hidden characters")) || !bytes.Contains(aliceWarn, []byte("can change files")) {
		t.Fatalf("teammate's warnings %s", aliceWarn)
	}
	sid := "teammate:alice/s1"
	did, apiWarn := leadDecision(t, lead, sid)
	_, leadDID, leadWarn := presentedMeta(t, permissionOf(t, lead, sid))
	if leadDID != did {
		t.Fatalf("lead IDE decision %s, API %s", leadDID, did)
	}
	if !bytes.Equal(leadWarn, aliceWarn) || !bytes.Equal(apiWarn, aliceWarn) {
		t.Errorf("warnings differ:\nteammate IDE %s\nlead IDE     %s\nlead API     %s", aliceWarn, leadWarn, apiWarn)
	}
	if code := apiAnswer(t, lead, sid, did, "allow"); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	// The teammate's IDE copy lost (withdrawn); the agent's next update
	// may come before or after the withdrawal.
	waitTexts(t, alice.runningRelay, `"$/cancel_request"`, "done1")
	if got := agentGot(t, alice.agentLog, "p1"); got != "selected:allow" {
		t.Errorf("alice's agent got %q, want the lead's allow", got)
	}
	var view struct{ ResolvedBy string }
	alice.get(t, "/v1/sessions/s1/decisions/"+aliceDID, &view)
	if view.ResolvedBy != "upstream:alice" {
		t.Errorf("alice's decision resolved by %q, want upstream:alice", view.ResolvedBy)
	}

	bobPerm := permissionOf(t, lead, "teammate:bob/s1")
	id, _, _ := presentedMeta(t, bobPerm)
	lead.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
	waitText(t, bob.runningRelay, "done1")
	if got := agentGot(t, bob.agentLog, "p1"); got != "selected:reject" {
		t.Errorf("bob's agent got %q, want the lead IDE's reject", got)
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

// TestTeammateCannotTakeSeeOrAnswerAnothers: while alice is connected,
// another connection cannot say hello as alice; a second teammate
// (mallory) is never shown alice's decision, and its forged responses,
// its ask and its withdraw in alice's name change nothing: the decision
// stays open at the lead until the lead's API answers it.
func TestTeammateCannotTakeSeeOrAnswerAnothers(t *testing.T) {
	lead, tokenFile := startLead(t)
	alice := startTeammate(t, lead, tokenFile, "alice")
	_, aliceDID, _ := presentedMeta(t, permissionOf(t, alice.runningRelay, "s1"))
	sid := "teammate:alice/s1"
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
		`{"jsonrpc":"2.0","method":"_acpmux/teammate/withdraw","params":{"teammate":"alice","sessionId":"s1","decisionId":"` + aliceDID + `"}}`,
	} {
		m.Write(ctx, websocket.MessageText, []byte(forged))
	}
	ask := `{"jsonrpc":"2.0","id":3,"method":"_acpmux/teammate/ask","params":{"teammate":"alice","sessionId":"s1","decisionId":"` + aliceDID +
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
	waitText(t, alice.runningRelay, "done1")
	if got := agentGot(t, alice.agentLog, "p1"); got != "selected:reject" {
		t.Errorf("alice's agent got %q, want the lead's reject", got)
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
// validates what the lead sends. An unoffered optionId and an answer for
// another snapshot (displayedTextSha256) never reach the agent: the
// decision stays open for the teammate's IDE, whose reject is delivered,
// and the journal names the refused answer.
func TestTeammateRefusesForgedUpstreamAnswers(t *testing.T) {
	url, tokenFile, withdrawn := fakeLead(t, func(ask map[string]any) string {
		if ask["title"] == "touch x" {
			return `{"outcome":{"outcome":"selected","optionId":"yolo"},"displayedTextSha256":"` + ask["displayedTextSha256"].(string) + `"}`
		}
		return `{"outcome":{"outcome":"selected","optionId":"allow"},"displayedTextSha256":"0000"}`
	})
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	r := startRelayProcessEnv(t, teammateScript, []string{acptest.EnvLog + "=" + agentLog},
		"--state", ":memory:", "--upstream", url, "--upstream-token-file", tokenFile, "--name", "alice")
	r.waitLog(t, "upstream: connected to the lead")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	for i, want := range []string{"invalid_answer", "another snapshot"} {
		id, did, _ := presentedMeta(t, permissionOf(t, r, "s1"))
		r.waitLog(t, "upstream: no answer from the lead") // the lead's answer was refused
		var view struct {
			Status string
			Events []struct{ Type, Host, Detail string }
		}
		r.get(t, "/v1/sessions/s1/decisions/"+did, &view)
		journal, _ := json.Marshal(view.Events)
		if view.Status != "open" || !strings.Contains(string(journal), want) {
			t.Errorf("request %d after the forged answer: status %s, journal %s; want open with %q", i+1, view.Status, journal, want)
		}
		r.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
		waitText(t, r, "done"+string(rune('1'+i)))
		if got := agentGot(t, agentLog, "p"+string(rune('1'+i))); got != "selected:reject" {
			t.Errorf("request %d: the agent got %q, want the IDE's reject", i+1, got)
		}
	}
	select {
	case d := <-withdrawn:
		t.Errorf("withdrawn %s although the lead's copy had abstained", d)
	default:
	}
}

// TestTeammateUpstreamLostMidDecision: the lead is killed while it shows
// two teammates' confirmations. Alice's IDE still answers hers (allow is
// delivered); Carol, headless, has no local host that answers: her
// decision waits and fails closed at its timeout with the reject option.
func TestTeammateUpstreamLostMidDecision(t *testing.T) {
	lead, tokenFile := startLead(t)
	alice := startTeammate(t, lead, tokenFile, "alice")
	carol := startTeammate(t, lead, tokenFile, "carol", "--headless", "--decision-timeout", "4s")
	id, _, _ := presentedMeta(t, permissionOf(t, alice.runningRelay, "s1"))
	permissionOf(t, lead, "teammate:alice/s1")
	permissionOf(t, lead, "teammate:carol/s1")
	lead.cmd.Process.Signal(syscall.SIGKILL)
	lead.cmd.Wait()
	alice.waitLog(t, "upstream: not connected to the lead")

	alice.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`)
	waitText(t, alice.runningRelay, "done1")
	if got := agentGot(t, alice.agentLog, "p1"); got != "selected:allow" {
		t.Errorf("alice's agent got %q, want her IDE's allow", got)
	}
	waitText(t, carol.runningRelay, "done1")
	if got := agentGot(t, carol.agentLog, "p1"); got != "selected:reject" {
		t.Errorf("carol's agent got %q, want the reject option at the timeout", got)
	}
}

// TestTeammateReoffersAfterReconnectAndIgnoresLateAnswers: the lead drops
// the connection on the first ask; the teammate reconnects (backoff) and
// offers the same decision again, whose allow is delivered once. The
// second decision is answered first by the teammate's IDE: the lead gets
// _acpmux/teammate/withdraw, and the allow it sends afterwards (stale) is
// not delivered.
func TestTeammateReoffersAfterReconnectAndIgnoresLateAnswers(t *testing.T) {
	type askMsg struct {
		id  string
		did string
		sha string
	}
	asks := make(chan askMsg, 16)
	var conns atomic.Int32
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
				switch {
				case first:
					return // the lead goes away mid-decision
				case m.Params.Title == "touch x":
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
	r := startRelayProcessEnv(t, teammateScript, []string{acptest.EnvLog + "=" + agentLog},
		"--state", ":memory:", "--upstream", "ws"+strings.TrimPrefix(srv.URL, "http")+"/acp", "--upstream-token-file", tokenFile, "--name", "alice")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
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
	waitText(t, r, "done1")
	if got := agentGot(t, agentLog, "p1"); got != "selected:allow" {
		t.Errorf("p1: the agent got %q, want the lead's allow", got)
	}
	id, _, _ := presentedMeta(t, permissionOf(t, r, "s1"))
	next() // the lead holds the ask of p2
	r.send(t, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`)
	if w := next(); w.id != "withdrawn" {
		t.Fatalf("want the lead to get a withdraw, got %+v", w)
	}
	waitText(t, r, "done2")
	log, _ := os.ReadFile(agentLog)
	if n := strings.Count(string(log), `"id":"p1","result"`); n != 1 {
		t.Errorf("p1 answered %d times", n)
	}
	if got := agentGot(t, agentLog, "p2"); got != "selected:reject" {
		t.Errorf("p2: the agent got %q, want the IDE's reject, never the lead's late allow", got)
	}
}
