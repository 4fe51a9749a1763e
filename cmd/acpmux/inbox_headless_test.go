package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
)

// startHeadlessShared runs "acpmux run --headless --state state --name
// web" without --listen, with the scripted headless agent, opens session
// s1 and finishes one prompt turn (after which the agent asks permission
// out of turn). It returns the relay, its bridge id and the agent's log.
func startHeadlessShared(t *testing.T, state string) (*runningRelay, string, string) {
	t.Helper()
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	cmd := exec.Command("acpmux", "run", "--headless", "--state", state, "--name", "web", "--", os.Args[0])
	cmd.Env = append(os.Environ(), acptest.EnvScript+"="+headlessAgentScript, acptest.EnvLog+"="+agentLog)
	r := startProc(t, cmd, registeredRe)
	bid := strings.TrimPrefix(r.apiURL, "http://")
	r.apiURL = ""
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	if m := r.waitFor(t, ""); m["id"] != float64(3) {
		t.Fatalf("want the prompt response first, got %v", m)
	}
	return r, bid, agentLog
}

// TestHeadlessBridgeWithoutListenIsAnsweredFromTheInbox: "acpmux run
// --headless --state FILE" with no --listen and no --upstream keeps its
// decision open in the shared store (the inbox can answer it) instead of
// refusing it at once as no_eligible_host; "acpmux inbox" sharing the
// file lists it open and answers it, and the answer reaches the agent.
func TestHeadlessBridgeWithoutListenIsAnsweredFromTheInbox(t *testing.T) {
	state := filepath.Join(t.TempDir(), "shared.db")
	r, bid, agentLog := startHeadlessShared(t, state)
	inbox := startInbox(t, state)
	v := openDecisionOf(t, inbox, bid, "s1")
	if code, got := answer(t, inbox, v, "allow"); code != 200 || got.Status != "answered" || !got.Delivered {
		t.Fatalf("inbox answering the headless bridge's decision: %d %+v", code, got)
	}
	if ideSawUntilDone(t, r) {
		t.Error("the headless IDE was shown a permission request")
	}
	log, _ := os.ReadFile(agentLog)
	if !strings.Contains(string(log), `"id":"bg1","result":{"outcome":{"outcome":"selected","optionId":"allow"}`) {
		t.Errorf("the agent did not get the inbox's allow:\n%s", log)
	}
}

// TestInboxServesEveryBridgesEvents: "acpmux inbox" serves GET /v1/events
// from the shared store, so "acpmux decisions watch" at the inbox shows
// the decision.opened events of both bridges sharing it (they are not a
// 404).
func TestInboxServesEveryBridgesEvents(t *testing.T) {
	state := filepath.Join(t.TempDir(), "shared.db")
	_, b1, _ := startHeadlessShared(t, state)
	_, b2, _ := startHeadlessShared(t, state)
	inbox := startInbox(t, state)
	want := map[string]bool{openDecisionOf(t, inbox, b1, "s1").ID: true, openDecisionOf(t, inbox, b2, "s1").ID: true}
	lines := watchLines(t, inbox.url, inbox.token, 0, false)
	for len(want) > 0 {
		l, ok := <-lines
		if !ok {
			t.Fatalf("the watch at the inbox ended; still missing the decision.opened of %v", want)
		}
		for id := range want {
			if strings.Contains(l, "decision.opened") && strings.Contains(l, id) {
				delete(want, id)
			}
		}
	}
}

// TestInboxListsOtherBridgesSessionsWithTheirCwd: GET /v1/sessions at the
// inbox gives a bridge's session the working directory its decision was
// asked in (session/new cwd "/tmp"), not "".
func TestInboxListsOtherBridgesSessionsWithTheirCwd(t *testing.T) {
	state := filepath.Join(t.TempDir(), "shared.db")
	_, bid, _ := startHeadlessShared(t, state)
	inbox := startInbox(t, state)
	openDecisionOf(t, inbox, bid, "s1")
	var list struct {
		Sessions []struct {
			SessionID, Cwd string
			Bridge         struct{ ID string }
		}
	}
	if code := inbox.do(t, "GET", "/v1/sessions", "", &list); code != 200 || len(list.Sessions) != 1 {
		t.Fatalf("sessions at the inbox: %d %+v", code, list.Sessions)
	}
	if s := list.Sessions[0]; s.SessionID != "s1" || s.Bridge.ID != bid || s.Cwd != "/tmp" {
		t.Fatalf("session at the inbox: %+v, want s1 of %s with cwd /tmp", s, bid)
	}
}

// TestInboxAnswerNamesThePersonInTheJournal: with per-person tokens in the
// shared store, an observer's answer at "acpmux inbox" to a headless
// bridge's decision is refused (403) and the bridge journals it as
// invalid_answer with the observer's name; an approver's answer wins, and
// the decision names the approver (answeredBy, and the answered event's
// person).
func TestInboxAnswerNamesThePersonInTheJournal(t *testing.T) {
	state := filepath.Join(t.TempDir(), "shared.db")
	_, bid, _ := startHeadlessShared(t, state)
	inbox := startInbox(t, state)
	v := openDecisionOf(t, inbox, bid, "s1")
	olga := api{inbox.url, addToken(t, state, "olga", "observer")}
	alice := api{inbox.url, addToken(t, state, "alice", "approver")}
	if code, got := answer(t, olga, v, "allow"); code != 403 {
		t.Fatalf("observer at the inbox: %d %+v, want 403", code, got)
	}
	type event struct{ Type, Host, Person string }
	var got struct {
		Status, AnsweredBy string
		Events             []event
	}
	journal := func(typ string) *event {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			inbox.do(t, "GET", "/v1/sessions/s1/decisions/"+v.ID+"?bridge="+bid, "", &got)
			for i := range got.Events {
				if got.Events[i].Type == typ {
					return &got.Events[i]
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no %s event in the journal: %+v", typ, got.Events)
		return nil
	}
	if ev := journal("invalid_answer"); ev.Person != "olga" {
		t.Fatalf("the refused answer's journal entry: %+v, want person olga", ev)
	}
	if code, res := answer(t, alice, v, "allow"); code != 200 || res.Status != "answered" {
		t.Fatalf("approver at the inbox: %d %+v", code, res)
	}
	if ev := journal("answered"); ev.Person != "alice" || got.AnsweredBy != "alice" {
		t.Fatalf("answered event %+v, answeredBy %q: want alice", ev, got.AnsweredBy)
	}
}
