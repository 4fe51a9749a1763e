package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// peerIDE is the IDE side of a teammate running a real agent: it reads
// every line acpmux writes, answers the agent's requests other than
// permission requests with -32601 (as the peer kit's driver does), leaves
// permission requests to the lead, and keeps the lines.
type peerIDE struct {
	r     *runningRelay
	mu    sync.Mutex // guards lines
	lines []string
	more  chan struct{}
}

func newPeerIDE(r *runningRelay) *peerIDE {
	ide := &peerIDE{r: r, more: make(chan struct{}, 1)}
	go func() {
		for r.out.Scan() {
			line := r.out.Text()
			var m struct {
				ID     json.RawMessage
				Method string
			}
			json.Unmarshal([]byte(line), &m)
			if m.ID != nil && m.Method != "" && m.Method != "session/request_permission" {
				r.stdin.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"not served by this test IDE"}}` + "\n"))
			}
			ide.mu.Lock()
			ide.lines = append(ide.lines, line)
			ide.mu.Unlock()
			select {
			case ide.more <- struct{}{}:
			default:
			}
		}
	}()
	return ide
}

// wait returns the first line containing text, waiting up to d.
func (ide *peerIDE) wait(t *testing.T, text string, d time.Duration) string {
	t.Helper()
	deadline := time.After(d)
	for {
		ide.mu.Lock()
		for _, l := range ide.lines {
			if strings.Contains(l, text) {
				ide.mu.Unlock()
				return l
			}
		}
		ide.mu.Unlock()
		select {
		case <-ide.more:
		case <-deadline:
			ide.mu.Lock()
			defer ide.mu.Unlock()
			t.Fatalf("the IDE got no line with %q; got:\n%s", text, strings.Join(ide.lines, "\n"))
		}
	}
}

// startPeerTeammate runs teammate name of lead over a real agent of the
// peer kit (qwen or gemini) against its own stub model, opens a session in
// a fresh git repository from its IDE and prompts "RUN: touch changed.txt".
func startPeerTeammate(t *testing.T, scripts string, lead *runningRelay, tokenFile, name string) (ide *peerIDE, sid, repo string) {
	t.Helper()
	agent, env := peerAgentCommand(t, name, stubModel(t, scripts))
	repo = filepath.Join(t.TempDir(), "repo")
	os.Mkdir(repo, 0o755)
	exec.Command("git", "-C", repo, "init", "-q", ".").Run()
	r := startRelayAgent(t, nil, []string{"sh", "-c", "exec " + agent}, env,
		"--state", ":memory:", "--upstream", wsURL(lead), "--upstream-token-file", tokenFile, "--name", name)
	lead.waitLog(t, "teammate connected")
	ide = newPeerIDE(r)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	ide.wait(t, `"id":1,"result"`, 60*time.Second)
	cwd, _ := json.Marshal(repo)
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":`+string(cwd)+`,"mcpServers":[]}}`)
	var res struct {
		Result struct{ SessionID string }
	}
	json.Unmarshal([]byte(ide.wait(t, `"id":2,`, 60*time.Second)), &res)
	if res.Result.SessionID == "" {
		t.Fatalf("%s: session/new gave no sessionId", name)
	}
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+res.Result.SessionID+`","prompt":[{"type":"text","text":"RUN: touch changed.txt"}]}}`)
	return ide, res.Result.SessionID, repo
}

// TestRealPeerTeammatesAnsweredFromLeadPage: a lead over two teammates,
// one running Qwen Code and one Gemini CLI (the peer kit, offline against
// the stub model), each an acpmux process over loopback WebSockets. Both
// confirmations reach the lead; Gemini CLI's is rejected at the lead's
// API, Qwen Code's is allowed with a click on the lead's approval page in
// headless Chromium: Qwen Code runs the command (changed.txt appears),
// Gemini CLI does not, and the page shows the teammate's transcript (its
// session teammate:qwen/SESSION). Opt-in: ACPMUX_PEERS naming qwen and
// gemini, with the peer kit (ACPMUX_PEER_SCRIPTS, PEERS_DIR).
func TestRealPeerTeammatesAnsweredFromLeadPage(t *testing.T) {
	peers, scripts := realPeers(t)
	if !strings.Contains(" "+strings.Join(peers, " ")+" ", " qwen ") || !strings.Contains(" "+strings.Join(peers, " ")+" ", " gemini ") {
		t.Skip("needs ACPMUX_PEERS with qwen and gemini")
	}
	chrome := browser(t)
	lead, tokenFile := startLead(t)
	qwen, qsid, qrepo := startPeerTeammate(t, scripts, lead, tokenFile, "qwen")
	gemini, gsid, grepo := startPeerTeammate(t, scripts, lead, tokenFile, "gemini")
	qdid, qwarn := leadDecision(t, lead, "teammate:qwen/"+qsid)
	gdid, _ := leadDecision(t, lead, "teammate:gemini/"+gsid)
	if !strings.Contains(string(qwarn), "can change files") {
		t.Errorf("qwen's decision at the lead has warnings %s", qwarn)
	}
	if code := apiAnswer(t, lead, "teammate:gemini/"+gsid, gdid, "reject"); code != 200 {
		// Gemini CLI's reject optionId is "cancel"; answer with what it offered.
		var view struct {
			Options []struct{ OptionID, Kind string }
		}
		lead.get(t, "/v1/sessions/"+url.PathEscape("teammate:gemini/"+gsid)+"/decisions/"+gdid, &view)
		answered := false
		for _, o := range view.Options {
			if strings.HasPrefix(o.Kind, "reject") && apiAnswer(t, lead, "teammate:gemini/"+gsid, gdid, o.OptionID) == 200 {
				answered = true
				break
			}
		}
		if !answered {
			t.Fatalf("could not reject gemini's decision: options %+v", view.Options)
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true), chromedp.WindowSize(420, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if _, err := chromedp.Run(bctx, chromedp.Navigate(lead.apiURL+"/?token="+lead.token)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(`.card.open button`)); err != nil {
		t.Fatal(err)
	}
	if n := eval(`String(document.querySelectorAll('.card.open').length)`); n != "1" {
		t.Errorf("%s open cards, want qwen's only", n)
	}
	card := eval(`document.querySelector('.card.open').innerText`)
	if !strings.Contains(card, "touch changed.txt") || !strings.Contains(card, "can change files") {
		t.Errorf("card:\n%s", card)
	}
	// Qwen Code's allow_once option is "proceed_once".
	allow := eval(`(() => { for (const b of document.querySelectorAll('.card.open button')) if (/allow|proceed/i.test(b.title) && !/always/i.test(b.title)) return b.title; return ''; })()`)
	if allow == "" {
		t.Fatalf("no allow-once button on the card:\n%s", card)
	}
	if _, err := chromedp.Run(ctx, chromedp.Click(`.card.open button[title="`+allow+`"]`)); err != nil {
		t.Fatal(err)
	}
	qwen.wait(t, `"stopReason"`, 90*time.Second)
	gemini.wait(t, `"stopReason"`, 90*time.Second)
	if !fileExists(filepath.Join(qrepo, "changed.txt")) {
		t.Errorf("the page's allow did not reach Qwen Code: no changed.txt")
	}
	if fileExists(filepath.Join(grepo, "changed.txt")) {
		t.Errorf("Gemini CLI ran the rejected command")
	}
	var view struct{ Status, ResolvedBy string }
	lead.get(t, "/v1/sessions/"+url.PathEscape("teammate:qwen/"+qsid)+"/decisions/"+qdid, &view)
	if view.Status != "answered" || view.ResolvedBy == "http" {
		t.Errorf("qwen's decision at the lead: %+v, want answered by the page", view)
	}
	// The page watches the teammate's transcript: the stub model's last
	// text reaches its session box.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(eval(`document.body.innerText`), "STUB DONE") {
		if time.Now().After(deadline) {
			t.Fatalf("the page does not show qwen's transcript:\n%s", eval(`document.body.innerText`))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("qwen decision %+v; page:\n%s", view, eval(`document.body.innerText`))
}
