package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpmux/acpmux/internal/optional"
)

// peersDir returns $ACPMUX_PEER_SCRIPTS, the directory of the offline peer
// kit (run_acp_peer.sh and the stub model), or "" when it is unset or
// holds no run_acp_peer.sh.
func peersDir() string {
	d := os.Getenv("ACPMUX_PEER_SCRIPTS")
	if d == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(d, "run_acp_peer.sh")); err != nil {
		return ""
	}
	abs, _ := filepath.Abs(d)
	return abs
}

// peerSummary is what run_acp_peer.sh records of one run, without the
// parts that differ between any two runs (timestamps, paths, ids).
type peerSummary struct {
	Permissions []string // title | kind | optionId:kind,...
	Prompts     []string // stopReason or error code
	Errors      int
	Files       []string
}

// realPeers returns the peers named in $ACPMUX_PEERS and the peer kit's
// directory, or skips the test: the real agents are opt-in.
func realPeers(t *testing.T) (peers []string, scripts string) {
	t.Helper()
	peers = strings.Fields(os.Getenv("ACPMUX_PEERS"))
	if len(peers) == 0 {
		optional.Skip(t, "peers", "opt-in: set ACPMUX_PEERS (and PEERS_DIR) to run the real agents")
	}
	if scripts = peersDir(); scripts == "" {
		optional.Skip(t, "peers", "no peer kit; set ACPMUX_PEER_SCRIPTS to its directory")
	}
	return peers, scripts
}

// runPeerScript runs run_acp_peer.sh PEER POLICY [PROMPT] with WRAP in
// front of the agent and returns its work directory and summary.json.
func runPeerScript(t *testing.T, scripts, peer, policy, wrap string, prompt ...string) (work string, summary []byte) {
	t.Helper()
	work = filepath.Join(t.TempDir(), peer+"-"+policy)
	cmd := exec.Command(filepath.Join(scripts, "run_acp_peer.sh"), append([]string{peer, policy}, prompt...)...)
	cmd.Env = append(os.Environ(), "WORK="+work, "WRAP="+wrap)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("run_acp_peer.sh %s %s (WRAP=%q): %v\n%s", peer, policy, wrap, err, out)
	}
	summary, err = os.ReadFile(filepath.Join(work, "summary.json"))
	if err != nil {
		t.Fatalf("%s %s: no summary: %v\n%s", peer, policy, err, out)
	}
	return work, summary
}

// repoFiles lists the files the agent left in the run's repository.
func repoFiles(work string) []string {
	var files []string
	entries, _ := os.ReadDir(filepath.Join(work, "repo"))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			files = append(files, e.Name())
		}
	}
	return files
}

func runPeer(t *testing.T, scripts, peer, policy, wrap string) peerSummary {
	t.Helper()
	work, raw := runPeerScript(t, scripts, peer, policy, wrap)
	var sum struct {
		PermissionRequests []struct {
			ToolCall struct {
				Title string `json:"title"`
				Kind  string `json:"kind"`
			} `json:"toolCall"`
			Options []struct{ OptionID, Kind string } `json:"options"`
		} `json:"permission_requests"`
		Prompts []struct {
			Response json.RawMessage `json:"response"`
		} `json:"prompts"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	var s peerSummary
	for _, p := range sum.PermissionRequests {
		var opts []string
		for _, o := range p.Options {
			opts = append(opts, o.OptionID+":"+o.Kind)
		}
		s.Permissions = append(s.Permissions, p.ToolCall.Kind+" | "+strings.Join(opts, ","))
	}
	for _, p := range sum.Prompts {
		var r struct {
			StopReason string `json:"stopReason"`
			Code       int    `json:"code"`
		}
		json.Unmarshal(p.Response, &r)
		if r.Code != 0 {
			r.StopReason = "error " + strconv.Itoa(r.Code)
		}
		s.Prompts = append(s.Prompts, r.StopReason)
	}
	s.Errors = len(sum.Errors)
	s.Files = repoFiles(work)
	return s
}

// TestRealPeers runs the real ACP agents of the peer kit (installed by its
// setup_peers.sh into $PEERS_DIR) offline against the scripted stub model,
// once directly and once as WRAP="acpmux run --", with the permission
// answered allow and reject, and requires the same outcome: the same
// permission requests and options, the same prompt results, the same files
// created. Set ACPMUX_PEERS to a space-separated list (claude qwen gemini
// codex example) to run it; it is skipped otherwise.
func TestRealPeers(t *testing.T) {
	peers, scripts := realPeers(t)
	for _, peer := range peers {
		for _, policy := range []string{"allow", "reject"} {
			t.Run(peer+"-"+policy, func(t *testing.T) {
				direct := runPeer(t, scripts, peer, policy, "")
				relayed := runPeer(t, scripts, peer, policy, "acpmux run --")
				if len(direct.Permissions) == 0 {
					t.Fatalf("the agent asked no permission directly: %+v", direct)
				}
				if !reflect.DeepEqual(direct, relayed) {
					t.Errorf("through acpmux:\n got %+v\nwant %+v", relayed, direct)
				}
				t.Logf("%s %s: %+v", peer, policy, relayed)
			})
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// answerThroughAPI polls the decisions API at base until ctx ends and
// answers every open decision with its first allow_once option, counting
// the answers.
func answerThroughAPI(ctx context.Context, base, token string, answered *atomic.Int32) {
	get := func(path string, v any) error {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(v)
	}
	for ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		var ss struct {
			Sessions []struct{ SessionID string } `json:"sessions"`
		}
		if get("/v1/sessions", &ss) != nil {
			continue
		}
		for _, s := range ss.Sessions {
			var ds struct {
				Decisions []struct {
					ID      string
					Status  string
					Options []struct{ OptionID, Kind string }
				} `json:"decisions"`
			}
			if get("/v1/sessions/"+url.PathEscape(s.SessionID)+"/decisions", &ds) != nil {
				continue
			}
			for _, d := range ds.Decisions {
				if d.Status != "open" {
					continue
				}
				for _, o := range d.Options {
					if o.Kind != "allow_once" {
						continue
					}
					body, _ := json.Marshal(map[string]string{"optionId": o.OptionID})
					req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/sessions/"+url.PathEscape(s.SessionID)+"/decisions/"+d.ID, bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+token)
					req.Header.Set("Content-Type", "application/json")
					if resp, err := http.DefaultClient.Do(req); err == nil {
						if resp.StatusCode == 200 {
							answered.Add(1)
						}
						resp.Body.Close()
					}
					break
				}
			}
		}
	}
}

// TestRealPeersAnswerThroughAPI runs each real agent behind
// "acpmux run --listen": the ACP driver never answers permission requests
// (policy none); a client of the decisions HTTP API answers them with the
// offered allow_once option, and the agent runs the command (changed.txt
// appears) and ends its turn normally. Opt-in like TestRealPeers.
func TestRealPeersAnswerThroughAPI(t *testing.T) {
	peers, scripts := realPeers(t)
	for _, peer := range peers {
		if peer == "example" {
			continue // its edit permission writes no file; TestRealPeers covers it
		}
		t.Run(peer, func(t *testing.T) {
			port := freePort(t)
			tokenFile := filepath.Join(t.TempDir(), "token")
			token := "peer-test-token-0123456789abcdef"
			os.WriteFile(tokenFile, []byte(token), 0o600)
			ctx, cancel := context.WithCancel(context.Background())
			var answered atomic.Int32
			done := make(chan struct{})
			go func() {
				defer close(done)
				answerThroughAPI(ctx, fmt.Sprintf("http://127.0.0.1:%d", port), token, &answered)
			}()
			wrap := fmt.Sprintf("acpmux run --listen 127.0.0.1:%d --token-file %s --state :memory: --", port, tokenFile)
			s := runPeer(t, scripts, peer, "none", wrap)
			cancel()
			<-done
			t.Logf("%s: %d answers through the API: %+v", peer, answered.Load(), s)
			if answered.Load() == 0 {
				t.Fatal("no decision was answered through the API")
			}
			if !slices.Contains(s.Files, "changed.txt") {
				t.Errorf("the approved command did not run: files %v", s.Files)
			}
			if len(s.Prompts) == 0 || s.Prompts[0] != "end_turn" {
				t.Errorf("prompt results %v, want end_turn", s.Prompts)
			}
		})
	}
}
