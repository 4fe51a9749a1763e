package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/confirm/hidden"
	"github.com/acpmux/acpmux/internal/optional"
	"github.com/acpmux/acpmux/internal/waitfile"
)

// browser returns the path of a Chromium to drive, or skips the test.
// ACPMUX_REQUIRE_BROWSER=1 (set by .ci/run) turns the skip into a failure.
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("ACPMUX_REQUIRE_BROWSER") == "1" {
		t.Fatal("no chromium on PATH (apt-get install chromium)")
	}
	optional.Skip(t, "browser", "no chromium on PATH; apt-get install chromium")
	return ""
}

// A title that would run script if the page ever parsed agent text as
// HTML, and a command that hides characters.
const hostileTitle = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>Delete build`
const hiddenCommand = "rm -rf build\u200b \u202egnp.txt"

// webAgentScript first asks, as claude-agent-acp does, to run a build
// command (the request the screenshots in docs/web.md show); in a second
// prompt turn it sends the hostile title and command.
const webAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"web-1"}}
recv session/prompt
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"web-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"The build output is stale after the upgrade. I'll remove the build directory and run a clean production build."}}}}
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"web-1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_01HkR7bXq2","title":"Terminal","kind":"execute","status":"pending","rawInput":{}}}}
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"web-1","toolCall":{"toolCallId":"toolu_01HkR7bXq2","title":"Run ` + "`rm -rf build && npm run build`" + `","kind":"execute","rawInput":{"command":"rm -rf build && npm run build","description":"Remove the old build output and rebuild"},"content":[{"type":"content","content":{"type":"text","text":"Remove the old build output and rebuild"}}]},"options":[{"optionId":"allow_always","name":"Always Allow","kind":"allow_always"},{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"p2","method":"session/request_permission","params":{"sessionId":"web-1","toolCall":{"toolCallId":"c2","title":"TITLE","kind":"execute","rawInput":{"command":"CMD"}},"options":[{"optionId":"allow","name":"Allow once","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
waiteof
`

// TestWebPageInBrowser drives the approval page in headless Chromium: it
// loads with the token (which is exchanged for a cookie and removed from the
// address bar), shows the pending confirmation with its warning, and a
// click on an offered option reaches the agent (the screenshots of
// docs/web.md). Then a hostile request: its hidden characters are escaped
// and named in a warning, its title runs no script, and the page escapes
// the same set of characters as hidden.Rune.
func TestWebPageInBrowser(t *testing.T) {
	chrome := browser(t)
	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	script := strings.Replace(webAgentScript, "TITLE", jsonEscape(hostileTitle), 1)
	script = strings.Replace(script, "CMD", jsonEscape(hiddenCommand), 1)
	r := startRelayProcessEnv(t, script, []string{acptest.EnvLog + "=" + agentLog}, "--state", ":memory:")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/home/me/webapp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"web-1","prompt":[{"type":"text","text":"The build is broken after the React upgrade; rebuild it from scratch."}]}}`)
	r.waitFor(t, "session/request_permission")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true), chromedp.WindowSize(420, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first Run starts the browser; it must not carry a timeout.
	if _, err := chromedp.Run(bctx, chromedp.Navigate(r.apiURL+"/?token="+r.token)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		must(err)
		return v
	}
	_, err := chromedp.Run(ctx, chromedp.WaitVisible(`.card.open button`))
	must(err)
	if loc := eval(`location.href`); strings.Contains(loc, "token") {
		t.Errorf("the token is still in the address bar: %s", loc)
	}
	card := eval(`document.querySelector('.card.open').innerText`)
	for _, want := range []string{"Run `rm -rf build && npm run build`", "This shell command can change files", "Always Allow", "Allow", "Reject", "write"} {
		if !strings.Contains(card, want) {
			t.Errorf("card lacks %q:\n%s", want, card)
		}
	}
	pending, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(err)
	saveScreenshot(t, "web-pending.png", pending)

	_, err = chromedp.Run(ctx, chromedp.Click(`.card.open button[title="allow"]`))
	must(err)
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	_, err = chromedp.Run(wctx, chromedp.WaitVisible(`.state.answered`))
	wcancel()
	if err != nil {
		t.Fatalf("the card never showed the answer: %v; page:\n%s", err, eval(`document.body.innerText`))
	}
	if s := eval(`document.querySelector('.state.answered').innerText`); !strings.Contains(s, "allow") {
		t.Errorf("card state %q, want answered with allow", s)
	}
	answered, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	must(err)
	saveScreenshot(t, "web-answered.png", answered)
	if data, err := waitfile.Contains(agentLog, `"id":"p1","result":{"outcome":{"outcome":"selected","optionId":"allow"}}`, 10*time.Second); err != nil {
		t.Fatalf("the click did not reach the agent; agent read:\n%s", data)
	}

	// The hostile request, in a second prompt turn.
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"web-1","prompt":[{"type":"text","text":"clean up"}]}}`)
	r.waitFor(t, "session/request_permission")
	_, err = chromedp.Run(ctx, chromedp.WaitVisible(`.card.open button`))
	must(err)
	card = eval(`document.querySelector('.card.open').innerText`)
	for _, want := range []string{"Delete build", "<img src=x", "U+200B ZERO WIDTH SPACE, U+202E RIGHT-TO-LEFT OVERRIDE", "Allow once", "Reject"} {
		if !strings.Contains(card, want) {
			t.Errorf("hostile card lacks %q:\n%s", want, card)
		}
	}
	if cmd := eval(`document.querySelector('.card.open pre.command').innerHTML`); !strings.Contains(cmd, `\u{200b}`) || !strings.Contains(cmd, `\u{202e}`) {
		t.Errorf("hidden characters not escaped in the command: %s", cmd)
	}
	checkPageHiddenSet(t, eval(pageHiddenRanges))
	if pwned := eval(`String(window.__pwned)`); pwned != "undefined" {
		t.Errorf("agent text ran as script: window.__pwned=%s", pwned)
	}
	if n := eval(`String(document.querySelectorAll('img, script:not([src])').length)`); n != "0" {
		t.Errorf("agent text became %s img/inline script elements", n)
	}
}

// pageHiddenRanges lists, as "start-end" hex ranges, every code point the
// page's hidden pattern (bridge/web/static/app.js) matches.
const pageHiddenRanges = `(() => {
  const re = new RegExp(hidden.source, 'u');
  const out = [];
  let start = -1;
  for (let c = 0; c <= 0x110000; c++) {
    const is = c < 0x110000 && !(c >= 0xd800 && c <= 0xdfff) && re.test(String.fromCodePoint(c));
    if (is && start < 0) start = c;
    if (!is && start >= 0) { out.push(start.toString(16) + '-' + (c - 1).toString(16)); start = -1; }
  }
  return out.join(' ');
})()`

// checkPageHiddenSet compares the page's hidden characters (ranges as
// pageHiddenRanges prints them) with hidden.Rune, which the page
// must agree with but for tab and line feed (layout on the page). A code
// point Go's Unicode tables do not assign yet may differ (the browser's
// Unicode can be newer).
func checkPageHiddenSet(t *testing.T, ranges string) {
	t.Helper()
	page := map[rune]bool{}
	for _, rg := range strings.Fields(ranges) {
		var lo, hi rune
		if _, err := fmt.Sscanf(rg, "%x-%x", &lo, &hi); err != nil {
			t.Fatalf("page range %q: %v", rg, err)
		}
		for r := lo; r <= hi; r++ {
			page[r] = true
		}
	}
	var diff []string
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		want := hidden.Rune(r) && r != '\t' && r != '\n'
		if page[r] == want || !assignedInGo(r) {
			continue
		}
		diff = append(diff, fmt.Sprintf("U+%04X page %v Go %v", r, page[r], want))
	}
	if len(diff) > 0 {
		t.Errorf("the page and hidden.Rune disagree on %d code points: %v", len(diff), diff[:min(len(diff), 20)])
	}
	for _, r := range []rune{0x1680, 0x110bd, 0x1bca0, 0x1bca3, 0x202e, 0xe0041} {
		if !page[r] {
			t.Errorf("the page does not escape U+%04X", r)
		}
	}
}

// assignedInGo reports whether Go's Unicode tables give r a category or
// a default-ignorable property.
func assignedInGo(r rune) bool {
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co,
		unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point)
}

func jsonEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\u200b", `\u200b`, "\u202e", `\u202e`)
	return r.Replace(s)
}

// saveScreenshot writes a screenshot to $ACPMUX_SCREENSHOTS (docs/ when
// refreshing the committed ones) or to the test's temp dir.
func saveScreenshot(t *testing.T, name string, png []byte) {
	dir := os.Getenv("ACPMUX_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Error(err)
	}
}
