package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// askStub is the peer kit's stub model with one change: the tool named
// by $STUB_TOOL (AskUserQuestion) is called with the input in
// $STUB_TOOL_INPUT instead of a shell command's arguments. It loads the
// kit's stub_llm.py from $STUB_ORIG_DIR.
const askStub = `import importlib.util, json, os
spec = importlib.util.spec_from_file_location("stub_orig", os.path.join(os.environ["STUB_ORIG_DIR"], "stub_llm.py"))
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
orig = m.shape_args
def shape(name, schema, cmd):
    if name == os.environ.get("STUB_TOOL"):
        return json.loads(os.environ["STUB_TOOL_INPUT"])
    return orig(name, schema, cmd)
m.shape_args = shape
m.main()
`

// askUserQuestionInput is what the stub model passes to Claude Code's
// AskUserQuestion tool.
const askUserQuestionInput = `{"questions":[{"question":"Which database should the new service use?","header":"Database",` +
	`"options":[{"label":"PostgreSQL","description":"Shared server, many machines"},{"label":"SQLite","description":"One file, one machine"}],"multiSelect":false}]}`

// questionKit copies the peer kit's driver scripts into a temporary
// directory with askStub as its stub_llm.py, and returns that directory.
func questionKit(t *testing.T, scripts string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"run_acp_peer.sh", "acp_drive.py"} {
		b, err := os.ReadFile(filepath.Join(scripts, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "stub_llm.py"), []byte(askStub), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// answerQuestionsThroughAPI polls the decisions API at base until ctx ends
// and answers every open question by accepting the first member of the
// first single select of its requested schema; it sends each answer it
// made to answers.
func answerQuestionsThroughAPI(ctx context.Context, base, token string, answers chan<- map[string]any) {
	do := func(method, path string, body []byte, v any) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, json.NewDecoder(resp.Body).Decode(v)
	}
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		var ss struct {
			Sessions []struct{ SessionID string } `json:"sessions"`
		}
		if _, err := do("GET", "/v1/sessions", nil, &ss); err != nil {
			continue
		}
		for _, s := range ss.Sessions {
			var ds struct {
				Decisions []struct {
					ID, Kind, Status string
					RequestedSchema  struct {
						Properties map[string]struct {
							OneOf []struct{ Const string } `json:"oneOf"`
						} `json:"properties"`
					} `json:"requestedSchema"`
				} `json:"decisions"`
			}
			path := "/v1/sessions/" + url.PathEscape(s.SessionID) + "/decisions"
			if _, err := do("GET", path+"?status=open", nil, &ds); err != nil {
				continue
			}
			for _, d := range ds.Decisions {
				if d.Kind != "question" {
					continue
				}
				content := map[string]any{}
				names := make([]string, 0, len(d.RequestedSchema.Properties))
				for name := range d.RequestedSchema.Properties {
					names = append(names, name)
				}
				slices.Sort(names)
				for _, name := range names {
					if p := d.RequestedSchema.Properties[name]; len(p.OneOf) > 0 {
						content[name] = p.OneOf[0].Const
						break
					}
				}
				answer := map[string]any{"action": "accept", "content": content}
				body, _ := json.Marshal(answer)
				var res map[string]any
				if code, err := do("POST", path+"/"+d.ID, body, &res); err == nil && code == 200 {
					answers <- answer
				}
			}
		}
	}
}

// TestRealPeerQuestionAnsweredThroughAPI: claude-agent-acp (the real
// adapter and Claude Code, offline against the stub model) behind
// "acpmux run --listen". The stub model calls Claude Code's AskUserQuestion
// tool; because acpmux advertises elicitation.form to the agent (the API
// serves it), the adapter asks it as an ACP elicitation/create. The ACP
// driver (the IDE) did not advertise elicitation and is not asked; a
// client of the decisions API answers it, and the model receives that
// answer in the tool's result. Opt-in: ACPMUX_PEERS must name claude.
func TestRealPeerQuestionAnsweredThroughAPI(t *testing.T) {
	peers, scripts := realPeers(t)
	if !slices.Contains(peers, "claude") {
		t.Skip("ACPMUX_PEERS does not name claude: only claude-agent-acp asks questions offline (AskUserQuestion)")
	}
	kit := questionKit(t, scripts)
	port := freePort(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	token := "peer-question-token-0123456789abcdef"
	os.WriteFile(tokenFile, []byte(token), 0o600)
	t.Setenv("STUB_ORIG_DIR", scripts)
	t.Setenv("STUB_TOOL", "AskUserQuestion")
	t.Setenv("STUB_TOOL_INPUT", askUserQuestionInput)
	ctx, cancel := context.WithCancel(context.Background())
	answers := make(chan map[string]any, 8)
	var wg sync.WaitGroup
	wg.Go(func() { answerQuestionsThroughAPI(ctx, fmt.Sprintf("http://127.0.0.1:%d", port), token, answers) })
	wrap := fmt.Sprintf("acpmux run --listen 127.0.0.1:%d --token-file %s --state :memory: --", port, tokenFile)
	work, raw := runPeerScript(t, kit, "claude", "none", wrap, "Ask me which database to use.")
	cancel()
	wg.Wait()
	close(answers)
	var got []map[string]any
	for a := range answers {
		got = append(got, a)
	}
	t.Logf("answers through the API: %v", got)
	if len(got) != 1 {
		t.Fatalf("%d questions answered through the API, want 1; summary:\n%s", len(got), raw)
	}
	if c := got[0]["content"].(map[string]any); c["question_0"] != "PostgreSQL" {
		t.Fatalf("answer %v: the adapter's form is not the one expected", got[0])
	}
	var sum struct {
		Prompts []struct {
			Response struct{ StopReason string } `json:"response"`
		} `json:"prompts"`
		PermissionRequests []json.RawMessage `json:"permission_requests"`
	}
	json.Unmarshal(raw, &sum)
	if len(sum.Prompts) != 1 || sum.Prompts[0].Response.StopReason != "end_turn" {
		t.Errorf("prompt results %+v, want end_turn", sum.Prompts)
	}
	if len(sum.PermissionRequests) != 0 {
		t.Errorf("the question reached the IDE as %d permission requests", len(sum.PermissionRequests))
	}
	// The model's next request carries the tool's result: the answer.
	stubLog, _ := os.ReadFile(filepath.Join(work, "stub.jsonl"))
	var results []string
	for _, line := range strings.Split(string(stubLog), "\n") {
		var req struct {
			Body struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			} `json:"body"`
		}
		if json.Unmarshal([]byte(line), &req) != nil {
			continue
		}
		for _, m := range req.Body.Messages {
			var blocks []struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "tool_result" {
					results = append(results, string(b.Content))
				}
			}
		}
	}
	if len(results) == 0 || !strings.Contains(results[len(results)-1], "PostgreSQL") {
		t.Fatalf("the model did not receive the answer in the tool result; tool results: %q", results)
	}
	t.Logf("the model read the tool result %.300s", results[len(results)-1])
}
