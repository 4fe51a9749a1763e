package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// planPeerRun is what one run_acp_peer.sh run through the plan-mode gate
// shows: the permission requests the driver was shown (title and offered
// option kinds), the prompt results, and the files in the repository.
type planPeerRun struct {
	Asked   []string // title | kind,kind
	Prompts []string
	Files   []string
}

func runPlanPeer(t *testing.T, scripts, peer, policy, wrap, prompt string) planPeerRun {
	t.Helper()
	work, raw := runPeerScript(t, scripts, peer, policy, wrap, prompt)
	var sum struct {
		PermissionRequests []struct {
			ToolCall struct{ Title string }  `json:"toolCall"`
			Options  []struct{ Kind string } `json:"options"`
		} `json:"permission_requests"`
		Prompts []struct {
			Response struct{ StopReason string } `json:"response"`
		} `json:"prompts"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	var r planPeerRun
	for _, p := range sum.PermissionRequests {
		var kinds []string
		for _, o := range p.Options {
			kinds = append(kinds, o.Kind)
		}
		r.Asked = append(r.Asked, p.ToolCall.Title+" | "+strings.Join(kinds, ","))
	}
	for _, p := range sum.Prompts {
		r.Prompts = append(r.Prompts, p.Response.StopReason)
	}
	r.Files = repoFiles(work)
	return r
}

// TestRealPeersPlanMode is plan mode's manual validation with the real
// agents of the peer kit behind WRAP="acpmux run --mode plan --lock-mode
// --": the stub model runs python3 -c 'print(1)' twice, git status and
// touch changed.txt (the write last: Qwen and Codex end the turn on a
// reject). python3 is shown twice, each time with only allow_once and
// reject_once; git status runs without a prompt; touch is blocked without a
// prompt and changed.txt never appears. The audit rows (acpmux audit
// --json on the run's store) must say so. (--lock-mode because
// run_acp_peer.sh switches claude-agent-acp to its "default" mode, which as
// a host's act would leave the gate.) Opt-in like TestRealPeers.
func TestRealPeersPlanMode(t *testing.T) {
	peers, scripts := realPeers(t)
	const prompt = "RUN: python3 -c 'print(1)' ;; python3 -c 'print(1)' ;; git status ;; touch changed.txt"
	for _, peer := range peers {
		if peer == "example" {
			continue // scripted edit, no shell commands
		}
		t.Run(peer, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.db")
			r := runPlanPeer(t, scripts, peer, "allow", "acpmux run --mode plan --lock-mode --state "+state+" --", prompt)
			t.Logf("%s: %+v", peer, r)
			if slices.Contains(r.Files, "changed.txt") {
				t.Errorf("touch changed.txt ran in plan mode: files %v", r.Files)
			}
			var python int
			for _, a := range r.Asked {
				title, kinds, _ := strings.Cut(a, " | ")
				if !strings.Contains(title, "python3") {
					t.Errorf("the driver was shown %q; only python3 may be asked", a)
					continue
				}
				python++
				if kinds != "allow_once,reject_once" {
					t.Errorf("python3 prompt offers %s, want only allow_once,reject_once", kinds)
				}
			}
			if python != 2 {
				t.Errorf("python3 asked %d times, want 2 (once per invocation)", python)
			}
			checkPlanAudit(t, state)
		})
	}
}

// checkPlanAudit reads the audit rows of a plan-mode peer run with
// "acpmux audit --json" and checks each command's route and decidedBy.
func checkPlanAudit(t *testing.T, state string) {
	t.Helper()
	var out, errb strings.Builder
	if code := Main([]string{"audit", "--state", state, "--json"}, stdio{strings.NewReader(""), &out, &errb}); code != 0 {
		t.Fatalf("acpmux audit: %d %s", code, errb.String())
	}
	var items []struct{ Command, Route, Decision, DecidedBy string }
	if err := json.Unmarshal([]byte(out.String()), &items); err != nil {
		t.Fatalf("audit JSON: %v\n%s", err, out.String())
	}
	seen := map[string]int{}
	for _, it := range items {
		t.Logf("audit: %+v", it)
		switch {
		case strings.Contains(it.Command, "git status"):
			seen["git"]++
			if it.Route != "allow" || it.DecidedBy != "builtin:plan-read-only" || it.Decision != "allow" {
				t.Errorf("git status row %+v, want allowed by builtin:plan-read-only", it)
			}
		case strings.Contains(it.Command, "touch changed.txt"):
			seen["touch"]++
			if it.Route != "plan_block" || it.Decision != "deny" {
				t.Errorf("touch row %+v, want plan_block", it)
			}
		case strings.Contains(it.Command, "python3"):
			seen["python"]++
			if it.Route != "one_off" || !strings.HasPrefix(it.DecidedBy, "host:") {
				t.Errorf("python3 row %+v, want a one-off decided by a host", it)
			}
		}
	}
	if seen["touch"] != 1 || seen["python"] != 2 {
		t.Errorf("audit rows by command %v, want touch 1, python 2 (git status when the agent asked)", seen)
	}
}
