package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acpmux/acpmux/acp/acptest"
)

// TestPageShowsPeopleInBrowser drives the page in headless Chromium with
// per-person tokens: an observer's page says who they are and shows the
// open request without any button; a revoked token's link is refused; an
// approver's page shows their name, their click reaches the agent and the
// card says who answered.
func TestPageShowsPeopleInBrowser(t *testing.T) {
	chrome := browser(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state.db")
	olga := addToken(t, state, "olga", "observer")
	alice := addToken(t, state, "alice", "approver")
	rex := addToken(t, state, "rex", "admin")
	if code, _, _ := runCLI("token", "revoke", "rex", "--state", state); code != 0 {
		t.Fatal("revoke rex")
	}
	agentLog := filepath.Join(dir, "agent.ndjson")
	r := startRelayProcessEnv(t, peopleAgentScript, []string{acptest.EnvLog + "=" + agentLog}, "--state", state)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`)
	r.waitFor(t, "session/request_permission")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if _, err := chromedp.Run(bctx, chromedp.Navigate(r.apiURL+"/?token="+olga)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(`.card.open .observer`)); err != nil {
		t.Fatalf("the observer's page never showed the request: %v\n%s", err, eval(`document.body.innerText`))
	}
	if who := eval(`document.getElementById('who').innerText`); who != "you: olga (observer)" {
		t.Errorf("observer page says %q", who)
	}
	if n := eval(`String(document.querySelectorAll('.card button').length)`); n != "0" {
		t.Errorf("the observer's page shows %s buttons", n)
	}
	if card := eval(`document.querySelector('.card.open').innerText`); !strings.Contains(card, "touch x") {
		t.Errorf("observer card:\n%s", card)
	}

	if _, err := chromedp.Run(ctx, chromedp.Navigate(r.apiURL+"/?token="+rex)); err != nil {
		t.Fatal(err)
	}
	if body := eval(`document.body.innerText`); !strings.Contains(body, "token_revoked") {
		t.Errorf("a revoked token's link: %s", body)
	}

	if _, err := chromedp.Run(ctx, chromedp.Navigate(r.apiURL+"/?token="+alice)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(`.card.open button[title="allow"]`)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); eval(`document.getElementById('who').innerText`) != "you: alice (approver)"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("approver page says %q", eval(`document.getElementById('who').innerText`))
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Click(`.card.open button[title="allow"]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(`.state.answered`)); err != nil {
		t.Fatal(err)
	}
	if s := eval(`document.querySelector('.state.answered').innerText`); !strings.Contains(s, "by alice") {
		t.Errorf("answered card says %q, want who answered", s)
	}
	r.waitFor(t, "session/update")
	if got := agentGot(t, agentLog, "p1"); got != "selected:allow" {
		data, _ := os.ReadFile(agentLog)
		t.Fatalf("agent got %q\n%s", got, data)
	}
}
