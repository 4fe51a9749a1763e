package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// peersDir returns the directory of the team's offline peer scripts
// (shared/peers: run_acp_peer.sh and the stub model), or "" when absent.
func peersDir() string {
	if d := os.Getenv("ACPMUX_PEER_SCRIPTS"); d != "" {
		return d
	}
	for _, d := range []string{"../../../shared/peers", "../../shared/peers"} {
		if _, err := os.Stat(filepath.Join(d, "run_acp_peer.sh")); err == nil {
			abs, _ := filepath.Abs(d)
			return abs
		}
	}
	return ""
}

// peerSummary is what run_acp_peer.sh records of one run, without the
// parts that differ between any two runs (timestamps, paths, ids).
type peerSummary struct {
	Permissions []string // title | kind | optionId:kind,...
	Prompts     []string // stopReason or error code
	Errors      int
	Files       []string
}

func runPeer(t *testing.T, scripts, peer, policy, wrap string) peerSummary {
	t.Helper()
	work := filepath.Join(t.TempDir(), peer+"-"+policy)
	cmd := exec.Command(filepath.Join(scripts, "run_acp_peer.sh"), peer, policy)
	cmd.Env = append(os.Environ(), "WORK="+work, "WRAP="+wrap)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("run_acp_peer.sh %s %s (WRAP=%q): %v\n%s", peer, policy, wrap, err, out)
	}
	raw, rerr := os.ReadFile(filepath.Join(work, "summary.json"))
	if rerr != nil {
		t.Fatalf("%s %s: no summary: %v\n%s", peer, policy, rerr, out)
	}
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
	entries, _ := os.ReadDir(filepath.Join(work, "repo"))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			s.Files = append(s.Files, e.Name())
		}
	}
	return s
}

// TestRealPeers runs the real ACP agents of shared/peers (installed by its
// setup_peers.sh into $PEERS_DIR) offline against the scripted stub model,
// once directly and once as WRAP="acpmux run --", with the permission
// answered allow and reject, and requires the same outcome: the same
// permission requests and options, the same prompt results, the same files
// created. Set ACPMUX_PEERS to a space-separated list (claude qwen gemini
// codex example) to run it; it is skipped otherwise.
func TestRealPeers(t *testing.T) {
	peers := strings.Fields(os.Getenv("ACPMUX_PEERS"))
	if len(peers) == 0 {
		t.Skip("set ACPMUX_PEERS (and PEERS_DIR) to run the real agents")
	}
	scripts := peersDir()
	if scripts == "" {
		t.Skip("shared/peers not found; set ACPMUX_PEER_SCRIPTS")
	}
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
