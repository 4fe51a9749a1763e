package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/internal/waitfile"
)

// raceTrials is how many decisions TestAnswersRacingFromThreeProcesses
// opens per store kind: 1000, or 100 in a -race build (its acpmux
// processes are race-instrumented too: 1000 trials took 9 minutes there);
// $ACPMUX_INBOX_TRIALS overrides it.
func raceTrials() int {
	if n, err := strconv.Atoi(os.Getenv("ACPMUX_INBOX_TRIALS")); err == nil && n > 0 {
		return n
	}
	if raceEnabled {
		return 100
	}
	return 1000
}

// manyPermissionsScript is a scripted agent that opens session s1, ends
// one prompt turn and then asks n permissions in turn (outside any turn,
// as background work does), each after the previous one's response.
func manyPermissionsScript(n int) string {
	var b strings.Builder
	b.WriteString(`recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
`)
	for i := range n {
		fmt.Fprintf(&b, `send {"jsonrpc":"2.0","id":"p%d","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c%d","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"a0","name":"Allow (A)","kind":"allow_once"},{"optionId":"a1","name":"Allow (B)","kind":"allow_once"},{"optionId":"a2","name":"Allow (inbox)","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
`, i, i)
	}
	b.WriteString("waiteof\n")
	return b.String()
}

// startScripted runs a bridge whose agent is script (in a file) and
// finishes its first prompt turn.
func startScripted(t *testing.T, state, name, script string) *bridgeProc {
	t.Helper()
	file := t.TempDir() + "/agent.script"
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, state, name, []string{acptest.EnvScript + "=@" + file}, os.Args[0])
	b.startSession(t)
	b.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	b.waitFor(t, "")
	return b
}

// TestAnswersRacingFromThreeProcesses: per store kind, bridges A and B
// (acpmux run, scripted agents that both call their session s1) and acpmux inbox share one --state. The session id collides: a
// route without ?bridge= is refused with 409 and both candidates, and a
// decision named under the wrong bridge is not found. Then, for each of
// raceTrials() decisions of A, A's API, B's API and the inbox answer at
// once, each with another allow option: exactly one answer wins (the
// others conflict), and A's agent receives exactly one response per
// request, with the winner's optionId.
func TestAnswersRacingFromThreeProcesses(t *testing.T) {
	n := raceTrials()
	for kind, newState := range sharedStates(t) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			state := newState(t)
			a := startScripted(t, state, "a", manyPermissionsScript(n))
			b := startScripted(t, state, "b", manyPermissionsScript(1))
			inbox := startInbox(t, state)
			openDecisionOf(t, inbox, b.id, "s1")
			first := openDecisionOf(t, inbox, a.id, "s1")
			collide(t, []api{a.api, b.api, inbox}, a, b, first)
			racers := []struct {
				api
				option string
			}{{a.api, "a0"}, {b.api, "a1"}, {inbox, "a2"}} // distinct allow options: the agent's response names the winner
			want := make([]string, n)
			for i := range n {
				v := openDecisionOf(t, inbox, a.id, "s1")
				var wg sync.WaitGroup
				codes := make([]int, len(racers))
				views := make([]sharedView, len(racers))
				for j, r := range racers {
					wg.Go(func() { codes[j], views[j] = answer(t, r.api, v, r.option) })
				}
				wg.Wait()
				winners := 0
				for j := range racers {
					switch {
					case codes[j] == 200 && !views[j].Deduped:
						winners++
						want[i] = racers[j].option
					case codes[j] == 409:
					default:
						t.Fatalf("trial %d: racer %d got %d", i, j, codes[j])
					}
				}
				if winners != 1 {
					t.Fatalf("trial %d: %d winners (%v): %+v", i, winners, codes, views)
				}
			}
			// A 200 says the answer won, not that A's agent has read its
			// response yet: the IDE leaves (which ends the agent) only once
			// the agent logged a response to every request.
			if _, err := waitfile.Until(a.log, time.Minute, func(data []byte) bool {
				return len(responseRe.FindAll(data, -1)) >= n
			}); err != nil {
				t.Errorf("A's agent did not log a response to each of %d requests: %v", n, err)
			}
			a.stdin.Close()
			a.cmd.Wait()
			checkOneResponseEach(t, a.log, want)
		})
	}
}

// collide checks the colliding session id s1 at every API.
func collide(t *testing.T, apis []api, a, b *bridgeProc, v sharedView) {
	t.Helper()
	for _, x := range apis {
		var amb struct {
			Error      struct{ Code string }
			Candidates []struct{ ID, Name string }
		}
		if code := x.do(t, "GET", "/v1/sessions/s1/decisions", "", &amb); code != 409 || amb.Error.Code != "ambiguous_session" || len(amb.Candidates) != 2 {
			t.Fatalf("list of a colliding session without ?bridge=: %d %+v, want 409 with two candidates", code, amb)
		}
		ids := amb.Candidates[0].ID + " " + amb.Candidates[1].ID
		if !strings.Contains(ids, a.id) || !strings.Contains(ids, b.id) {
			t.Fatalf("candidates %s, want %s and %s", ids, a.id, b.id)
		}
		if code := x.do(t, "POST", "/v1/sessions/s1/decisions/"+v.ID, `{"optionId":"a0"}`, &amb); code != 409 {
			t.Fatalf("answer in a colliding session without ?bridge=: %d, want 409", code)
		}
		if code := x.do(t, "POST", "/v1/sessions/s1/decisions/"+v.ID+"?bridge="+b.id, `{"optionId":"a0"}`, nil); code != 404 {
			t.Fatalf("a's decision named under bridge b: %d, want 404", code)
		}
		var got sharedView
		if code := x.do(t, "GET", "/v1/sessions/s1/decisions/"+v.ID+"?bridge="+a.id, "", &got); code != 200 || got.Status != "open" || got.Bridge.ID != a.id {
			t.Fatalf("a's decision with ?bridge=: %d %+v", code, got)
		}
	}
	link := apis[len(apis)-1].url + "/?token=" + apis[len(apis)-1].token
	out, err := exec.Command("acpmux", "decisions", "show", v.ID, "--session", "s1", "--url", link).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "several bridges") {
		t.Fatalf("acpmux decisions show without --bridge: %v\n%s", err, out)
	}
	out, err = exec.Command("acpmux", "decisions", "show", v.ID, "--session", "s1", "--bridge", a.id, "--url", link).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "touch x") {
		t.Fatalf("acpmux decisions show --bridge: %v\n%s", err, out)
	}
	out, err = exec.Command("acpmux", "decisions", "list", "--status", "open", "--url", link).CombinedOutput()
	if err != nil || strings.Count(string(out), "s1") != 2 {
		t.Fatalf("acpmux decisions list of every bridge: %v\n%s", err, out)
	}
}

var responseRe = regexp.MustCompile(`"id":"p(\d+)","result":\{"outcome":\{"outcome":"selected","optionId":"(\w+)"`)

// checkOneResponseEach reads the agent's log: exactly one response for
// each request p0…, with the optionId want[i].
func checkOneResponseEach(t *testing.T, log string, want []string) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]string, len(want))
	for _, m := range responseRe.FindAllStringSubmatch(string(data), -1) {
		i, _ := strconv.Atoi(m[1])
		if i < len(want) {
			got[i] = append(got[i], m[2])
		}
	}
	for i := range want {
		if len(got[i]) != 1 || got[i][0] != want[i] {
			t.Fatalf("request p%d: the agent got %v, want exactly [%s]", i, got[i], want[i])
		}
	}
}
