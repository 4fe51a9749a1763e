package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/bridge"
)

// TestRealPeersAgentPlanMode: behind WRAP="acpmux run --mode plan
// --lock-mode --record FILE --", acpmux puts an agent that offers a plan
// mode of its own (Claude through claude-agent-acp offers "plan") into it
// right after session/new: the transcript shows acpmux's session/set_mode
// {modeId: "plan"} to the agent before any prompt, and the agent's success
// response to it; the write the stub model then tries is blocked and
// changed.txt never appears. Peers that offer no plan mode are skipped.
// Opt-in like TestRealPeers (ACPMUX_PEERS=claude).
func TestRealPeersAgentPlanMode(t *testing.T) {
	peers, scripts := realPeers(t)
	for _, peer := range peers {
		t.Run(peer, func(t *testing.T) {
			dir := t.TempDir()
			rec := filepath.Join(dir, "session.ndjson")
			wrap := "acpmux run --mode plan --lock-mode --state " + filepath.Join(dir, "state.db") + " --record " + rec + " --"
			work, _ := runPeerScript(t, scripts, peer, "allow", wrap, "RUN: touch changed.txt")
			if slices.Contains(repoFiles(work), "changed.txt") {
				t.Errorf("touch changed.txt ran in plan mode")
			}
			data, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			offered, setID, setAt, promptAt, ok := agentPlanModeSet(t, data)
			if offered == "" {
				t.Skipf("%s offers no plan mode in session/new", peer)
			}
			if setID == "" {
				t.Fatalf("%s offers mode %q but acpmux sent it no session/set_mode to it", peer, offered)
			}
			if promptAt >= 0 && setAt > promptAt {
				t.Errorf("session/set_mode (entry %d) came after the first session/prompt (entry %d)", setAt, promptAt)
			}
			if !ok {
				t.Errorf("%s did not answer acpmux's session/set_mode %s (id %s) with a result", peer, offered, setID)
			}
			t.Logf("%s: acpmux set mode %q (request %s, transcript entry %d), first prompt at entry %d", peer, offered, setID, setAt, promptAt)
		})
	}
}

// agentPlanModeSet reads a --record transcript: the plan mode the agent
// offered in its session/new result, the id and index of the
// session/set_mode acpmux sent it for that mode, the index of the first
// session/prompt to the agent (-1 for none), and whether the agent
// answered the set_mode with a result.
func agentPlanModeSet(t *testing.T, data []byte) (offered, setID string, setAt, promptAt int, ok bool) {
	t.Helper()
	promptAt, setAt = -1, -1
	results := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for i := 0; sc.Scan(); i++ {
		var e bridge.RecordEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct{ ModeID string }
			Result *struct {
				Modes struct{ AvailableModes []struct{ ID string } }
			}
			Error json.RawMessage
		}
		json.Unmarshal(e.Msg, &m)
		switch {
		case e.Dir == bridge.FromAgent && m.Result != nil && offered == "":
			for _, md := range m.Result.Modes.AvailableModes {
				if strings.Contains(strings.ToLower(md.ID), "plan") {
					offered = md.ID
				}
			}
		case e.Dir == bridge.ToAgent && m.Method == "session/set_mode" && m.Params.ModeID == offered && offered != "" && setID == "":
			setID, setAt = string(m.ID), i
		case e.Dir == bridge.ToAgent && m.Method == "session/prompt" && promptAt < 0:
			promptAt = i
		case e.Dir == bridge.FromAgent && m.Method == "" && len(m.ID) > 0:
			results[string(m.ID)] = m.Error == nil
		}
	}
	return offered, setID, setAt, promptAt, results[setID]
}
