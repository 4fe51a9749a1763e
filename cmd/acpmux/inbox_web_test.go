package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInboxPageGroupsByBridgeAndSession opens the page of acpmux inbox in
// headless Chromium with two bridges sharing a SQLite --state whose agents
// both call their session s1: the pending confirmations are grouped under
// each bridge (its name and agent) and session, and a click on an option
// of bridge alpha's card reaches alpha's agent, not beta's.
func TestInboxPageGroupsByBridgeAndSession(t *testing.T) {
	chrome := browser(t)
	state := filepath.Join(t.TempDir(), "state.db")
	a := startScripted(t, state, "alpha", manyPermissionsScript(1))
	b := startScripted(t, state, "beta", manyPermissionsScript(1))
	inbox := startInbox(t, state)
	openDecisionOf(t, inbox, a.id, "s1")
	openDecisionOf(t, inbox, b.id, "s1")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("no-first-run", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if _, err := chromedp.Run(bctx, chromedp.Navigate(inbox.url+"/?token="+inbox.token)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	sel := func(id string) string { return `#bridge-` + id + ` .session .card.open button[title="a0"]` }
	for _, id := range []string{a.id, b.id} {
		if _, err := chromedp.Run(ctx, chromedp.WaitVisible(sel(id))); err != nil {
			t.Fatalf("the card of bridge %s: %v", id, err)
		}
	}
	for _, p := range []*bridgeProc{a, b} {
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('bridge-`+p.id+`').innerText`))
		if err != nil || !strings.Contains(text, "Session s1") || !strings.Contains(text, "touch x") {
			t.Fatalf("bridge %s's group: %q %v", p.id, text, err)
		}
	}
	heads, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('.bridge h3')].map(h => h.innerText).join('|')`))
	if !strings.Contains(heads, "alpha") || !strings.Contains(heads, "beta") {
		t.Fatalf("bridge headings %q, want alpha and beta", heads)
	}
	if _, err := chromedp.Run(ctx, chromedp.Click(sel(a.id))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(`#bridge-`+a.id+` .state.answered`)); err != nil {
		t.Fatalf("answering alpha's card: %v", err)
	}
	a.stdin.Close()
	a.cmd.Wait()
	checkOneResponseEach(t, a.log, []string{"a0"})
	var list struct{ Decisions []sharedView }
	if b.do(t, "GET", "/v1/sessions/s1/decisions?status=open&bridge="+b.id, "", &list); len(list.Decisions) != 1 {
		t.Fatalf("beta's decision after alpha's was answered: %+v, want still open", list.Decisions)
	}
}
