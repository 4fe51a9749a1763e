package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInboxPageShowsAnObserverNoButtons opens the page of acpmux inbox in
// headless Chromium with an observer's token (docs/tokens.md): the card of
// a headless bridge's pending confirmation under "Bridges" (the inbox has
// no bridge of its own, so none is "other") has no
// answer buttons, only the "You are an observer" notice, and the Sessions
// section does not claim there is no session.
func TestInboxPageShowsAnObserverNoButtons(t *testing.T) {
	chrome := browser(t)
	state := filepath.Join(t.TempDir(), "state.db")
	_, bid, _ := startHeadlessShared(t, state)
	inbox := startInbox(t, state)
	openDecisionOf(t, inbox, bid, "s1")
	olga := addToken(t, state, "olga", "observer")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("no-first-run", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if _, err := chromedp.Run(bctx, chromedp.Navigate(inbox.url+"/?token="+olga)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	card := `#bridge-` + bid + ` .session .card.open`
	if _, err := chromedp.Run(ctx, chromedp.WaitVisible(card+` .observer`)); err != nil {
		t.Fatalf("the observer notice on the card of bridge %s: %v", bid, err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#bridges button').length`))
	if err != nil || n != 0 {
		t.Fatalf("%d buttons under Other bridges for an observer (%v), want none", n, err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('no-sessions').innerText`))
	if err != nil || strings.Contains(text, "No session yet") || !strings.Contains(text, "1 session") || !strings.Contains(text, `listed under "Bridges"`) {
		t.Fatalf("the Sessions section says %q (%v) while a bridge has a session", text, err)
	}
	if h, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#bridges h2').innerText`)); err != nil || h != "Bridges" {
		t.Fatalf("the inbox's heading of the bridges: %q (%v), want Bridges (it has no bridge of its own)", h, err)
	}
}
