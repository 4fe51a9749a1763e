package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsUntil reads c until a message containing want and returns every
// message read, in order.
func wsUntil(t *testing.T, c *websocket.Conn, want string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []string
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v; got:\n%s", want, err, strings.Join(got, "\n"))
		}
		got = append(got, string(data))
		if strings.Contains(string(data), want) {
			return got
		}
	}
}

func wsSend(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// updateBytes returns the raw update member of the session/update among
// msgs that contains text.
func updateBytes(msgs []string, text string) []byte {
	for _, m := range msgs {
		var n struct {
			Method string
			Params struct {
				Update json.RawMessage `json:"update"`
			}
		}
		if json.Unmarshal([]byte(m), &n) == nil && n.Method == "session/update" && bytes.Contains(n.Params.Update, []byte(text)) {
			return n.Params.Update
		}
	}
	return nil
}

// TestTeammateTranscriptWatchedReadOnlyAtLead: a teammate (over the
// acp-go-sdk example agent) forwards its agent's session/update stream
// to the lead; a host of the lead that joins "teammate:NAME/SESSION" with
// session/attach gets the transcript so far (replay), the open decision,
// and the live updates, whose update members are byte-identical to what
// the teammate's IDE got. Without --allow-teammate-prompts the session is
// read-only: session/prompt and session/set_mode are refused and never
// reach either agent; another teammate's connection cannot attach, nor
// send updates in the teammate's name.
func TestTeammateTranscriptWatchedReadOnlyAtLead(t *testing.T) {
	lead, tokenFile := startLead(t)
	alice := startTeammate(t, lead, tokenFile, "alice")
	permissionOf(t, alice.runningRelay, alice.sid)
	sid := alice.lead("alice")
	did, _ := leadDecision(t, lead, sid)

	w := wsClient(t, lead)
	wsSend(t, w, `{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"`+sid+`","historyPolicy":"full"}}`)
	got := wsUntil(t, w, "session/request_permission")
	joined := strings.Join(got, "\n")
	for _, want := range []string{`"id":1,"result"`, "ACP Go Example Agent", "Reading project files", "Modifying critical configuration file"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the watching host lacks %q:\n%s", want, joined)
		}
	}
	if !strings.Contains(joined, `"sessionId":"`+sid+`"`) {
		t.Errorf("the transcript is not under %s:\n%s", sid, joined)
	}

	for i, req := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":"` + sid + `","modeId":"plan"}}`,
	} {
		wsSend(t, w, req)
		r := wsUntil(t, w, `"id":`+string(rune('2'+i))+`,`)
		if last := r[len(r)-1]; !strings.Contains(last, `"error"`) || !strings.Contains(last, "--allow-teammate-prompts") {
			t.Errorf("a request to the teammate's session: %s, want refused as read-only", last)
		}
	}

	m := wsClient(t, lead)
	call(t, m, `{"jsonrpc":"2.0","id":1,"method":"_acpmux/teammate/hello","params":{"teammate":"mallory"}}`, "1")
	if r := call(t, m, `{"jsonrpc":"2.0","id":2,"method":"session/attach","params":{"sessionId":"`+sid+`"}}`, "2"); !strings.Contains(r, `"error"`) {
		t.Errorf("another teammate attached to alice's session: %s", r)
	}
	wsSend(t, m, `{"jsonrpc":"2.0","method":"_acpmux/teammate/update","params":{"teammate":"alice","sessionId":"`+alice.sid+`","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"FORGED"}}}}`)
	call(t, m, `{"jsonrpc":"2.0","id":3,"method":"_acpmux/teammate/hello","params":{"teammate":"mallory"}}`, "3") // after the forged update

	if code := apiAnswer(t, lead, sid, did, "allow"); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	live := wsUntil(t, w, exampleAllowed)
	if strings.Contains(strings.Join(live, "\n"), "FORGED") {
		t.Errorf("an update in alice's name from another teammate was shown")
	}
	var ide []string
	for alice.out.Scan() {
		ide = append(ide, alice.out.Text())
		if strings.Contains(alice.out.Text(), exampleAllowed) {
			break
		}
	}
	if a, b := updateBytes(ide, exampleAllowed), updateBytes(live, exampleAllowed); a == nil || !bytes.Equal(a, b) {
		t.Errorf("the update differs:\nteammate IDE %s\nlead host    %s", a, b)
	}
	if got := agentAnswers(t, alice.agentLog); !slices.Equal(got, []string{"selected:allow"}) {
		t.Errorf("alice's agent read %q", got)
	}
	waitText(t, alice.runningRelay, `"stopReason"`)
	log, _ := os.ReadFile(alice.agentLog)
	if n := strings.Count(string(log), `"method":"session/prompt"`); n != 1 {
		t.Errorf("alice's agent got %d session/prompt, want only her IDE's", n)
	}
}

// TestLeadPromptsTeammateWithAllowTeammatePrompts: with the lead's
// --allow-teammate-prompts, a lead host's session/prompt of
// "teammate:NAME/SESSION" runs a prompt turn in the teammate's session:
// the teammate's IDE sees the prompt echoed and the turn, its
// confirmation is decided as always (here rejected at the lead's API),
// and the lead host gets the agent's session/prompt result.
func TestLeadPromptsTeammateWithAllowTeammatePrompts(t *testing.T) {
	lead, tokenFile := startLead(t, "--allow-teammate-prompts")
	alice := startTeammate(t, lead, tokenFile, "alice")
	sid := alice.lead("alice")
	did, _ := leadDecision(t, lead, sid)
	if code := apiAnswer(t, lead, sid, did, "allow"); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	waitText(t, alice.runningRelay, `"stopReason"`)

	w := wsClient(t, lead)
	wsSend(t, w, `{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"`+sid+`","historyPolicy":"none"}}`)
	wsUntil(t, w, `"id":1,`)
	wsSend(t, w, `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"from the lead"}]}}`)
	waitText(t, alice.runningRelay, "from the lead") // the prompt, echoed to the teammate's IDE
	did2 := ""
	for deadline := time.Now().Add(20 * time.Second); did2 == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var list struct{ Decisions []struct{ ID string } }
		lead.get(t, "/v1/sessions/"+url.PathEscape(sid)+"/decisions?status=open", &list)
		if len(list.Decisions) > 0 {
			did2 = list.Decisions[0].ID
		}
	}
	if did2 == "" {
		t.Fatal("the lead's prompt turn opened no decision at the lead")
	}
	if code := apiAnswer(t, lead, sid, did2, "reject"); code != 200 {
		t.Fatalf("lead API answer: %d", code)
	}
	r := wsUntil(t, w, `"id":7,`)
	if last := r[len(r)-1]; !strings.Contains(last, `"stopReason":"end_turn"`) {
		t.Errorf("the lead host's prompt response: %s", last)
	}
	if !strings.Contains(strings.Join(r, "\n"), exampleRejected) {
		t.Errorf("the lead host did not see the turn:\n%s", strings.Join(r, "\n"))
	}
	waitText(t, alice.runningRelay, exampleRejected)
	if got := agentAnswers(t, alice.agentLog); !slices.Equal(got, []string{"selected:allow", "selected:reject"}) {
		t.Errorf("alice's agent read %q", got)
	}
}
