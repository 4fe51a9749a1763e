package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/acpmux/acpmux/acp/acptest"
)

// questionForm is the requested schema of the page's form question: every
// property type, a required mark, a single select shown as buttons
// (oneOf, 2 members), one shown as a select (enum, 6 members) and a multi
// select.
const questionForm = `{"type":"object","title":"Deploy settings","properties":{` +
	`"name":{"type":"string","title":"Release name","description":"Shown in the changelog","minLength":1,"maxLength":40},` +
	`"count":{"type":"integer","title":"Replicas","minimum":1,"maximum":10},` +
	`"env":{"type":"string","title":"Environment","oneOf":[{"const":"staging","title":"Staging"},{"const":"prod","title":"Production"}]},` +
	`"region":{"type":"string","title":"Region","enum":["us-east-1","us-west-2","eu-west-1","eu-central-1","ap-south-1","sa-east-1"]},` +
	`"notify":{"type":"boolean","title":"Notify the team","default":false},` +
	`"checks":{"type":"array","title":"Checks to run first","items":{"anyOf":[{"const":"lint","title":"Lint"},{"const":"test","title":"Unit tests"},{"const":"e2e","title":"End-to-end"}]},"minItems":1},` +
	`"ratio":{"type":"number","title":"Canary share","minimum":0,"maximum":1}},` +
	`"required":["name","count","env"]}`

// hostileSchema carries markup in every text the page shows: titles,
// descriptions, option names and an option's value.
const hostileSchema = `{"type":"object","title":"<img src=x onerror=\"window.__pwned=11\">Schema","description":"<script>window.__pwned=12</script>desc",` +
	`"properties":{"pick":{"type":"string","title":"<img src=x onerror=\"window.__pwned=13\">Pick","description":"<b onmouseover=\"window.__pwned=14\">hint</b>",` +
	`"oneOf":[{"const":"\"><img src=x onerror=window.__pwned=15>","title":"<img src=x onerror=\"window.__pwned=16\">One"},{"const":"two","title":"<svg onload=\"window.__pwned=17\">Two"}]}}}`

// webQuestionScript: the agent asks a form question (q1) in the first
// prompt turn, a URL-mode question (q2, its URL given by the test) in the
// second and a question full of markup (q3) in the third.
const webQuestionScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"web-q"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"sessionId":"web-q","message":"How should I deploy release 4.2?","mode":"form","requestedSchema":FORM}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"q2","method":"elicitation/create","params":{"sessionId":"web-q","message":"Sign in to the registry","mode":"url","url":"URL","elicitationId":"login-1"}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"q3","method":"elicitation/create","params":{"sessionId":"web-q","message":"TITLE","mode":"form","requestedSchema":HOSTILE}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
waiteof
`

// agentResult returns the result the agent read in the response with id.
func agentResult(t *testing.T, agentLog, id string) map[string]any {
	t.Helper()
	data, _ := os.ReadFile(agentLog)
	for _, line := range strings.Split(string(data), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result map[string]any  `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == "" && string(m.ID) == `"`+id+`"` {
			return m.Result
		}
	}
	t.Fatalf("the agent read no response %s; it read:\n%s", id, data)
	return nil
}

// TestWebPageAnswersQuestions drives the page in headless Chromium against
// acpmux run and a scripted agent asking three questions (the screenshot
// docs/web-question.png comes from the first).
func TestWebPageAnswersQuestions(t *testing.T) {
	chrome := browser(t)
	var hits = make(chan string, 8)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			hits <- r.URL.RequestURI()
		}
		w.Write([]byte("<!doctype html><title>login</title>signed in"))
	}))
	defer site.Close()
	loginURL := site.URL + "/login?next=%2Fregistry&user=me"

	agentLog := filepath.Join(t.TempDir(), "agent.ndjson")
	script := strings.NewReplacer("FORM", questionForm, "HOSTILE", hostileSchema, "URL", loginURL, "TITLE", jsonEscape(hostileTitle)).Replace(webQuestionScript)
	r := startRelayProcessEnv(t, script, []string{acptest.EnvLog + "=" + agentLog}, "--state", ":memory:")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/home/me/webapp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"web-q","prompt":[{"type":"text","text":"Deploy 4.2"}]}}`)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true), chromedp.WindowSize(420, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if _, err := chromedp.Run(bctx, chromedp.Navigate(r.apiURL+"/?token="+r.token)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()
	run := func(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%v; page:\n%s", err, body)
		}
	}
	eval := func(t *testing.T, js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	const card = `.card.open.question`
	field := func(name string) string { return card + ` .field[data-field="` + name + `"]` }

	t.Run("RefusedFieldShownThenCorrected", func(t *testing.T) {
		run(t, chromedp.WaitVisible(field("count")+` input`))
		text := eval(t, `document.querySelector('.card.open.question').innerText`)
		for _, want := range []string{"How should I deploy release 4.2?", "Deploy settings", "Release name", "Shown in the changelog", "Replicas",
			"Staging", "Production", "Notify the team", "Lint", "Unit tests", "End-to-end", "Canary share", "Submit", "Decline", "Cancel"} {
			if !strings.Contains(text, want) {
				t.Errorf("the form lacks %q:\n%s", want, text)
			}
		}
		if n := eval(t, `String(document.querySelectorAll('.card.open.question .field .req').length)`); n != "3" {
			t.Errorf("%s fields marked required, want 3 (name, count, env)", n)
		}
		if n := eval(t, `String(document.querySelectorAll('.card.open.question .field[data-field="region"] select option').length)`); n != "7" {
			t.Errorf("the 6-member enum is not a select with an empty choice: %s options", n)
		}
		run(t,
			chromedp.SendKeys(field("name")+` input`, "web"),
			chromedp.SendKeys(field("count")+` input`, "50"),
			chromedp.Click(field("env")+` button[data-value="prod"]`),
			chromedp.SetValue(field("region")+` select`, "eu-west-1"),
			chromedp.Click(field("notify")+` input`),
			chromedp.Click(field("checks")+` input[value="lint"]`),
			chromedp.Click(field("checks")+` input[value="test"]`),
			chromedp.Click(card+` button[data-action="accept"]`),
			chromedp.WaitVisible(field("count")+` .error`),
		)
		if msg := eval(t, `document.querySelector('.card.open.question .field[data-field="count"] .error').innerText`); !strings.Contains(msg, "10") {
			t.Errorf("the refused field's message %q does not say its limit", msg)
		}
		if n := eval(t, `String([...document.querySelectorAll('.card.open.question .error')].filter(e => e.textContent).length)`); n != "1" {
			t.Errorf("%s error messages shown, want only the one next to count", n)
		}
		eval(t, `window.scrollTo(0, 0), ''`) // the sticky header at the top of the picture
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		saveScreenshot(t, "web-question.png", png)

		run(t,
			chromedp.SetValue(field("count")+` input`, "3"),
			chromedp.Click(card+` button[data-action="accept"]`),
		)
		r.waitFor(t, "") // the prompt turn ends after the agent read its answer
		got := agentResult(t, agentLog, "q1")
		want := map[string]any{"action": "accept", "content": map[string]any{
			"name": "web", "count": 3.0, "env": "prod", "region": "eu-west-1", "notify": true, "checks": []any{"lint", "test"}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the agent got %v, want %v", got, want)
		}
		run(t, chromedp.WaitNotPresent(`.card.open`))
		if s := eval(t, `document.querySelector('.card.question .state').innerText`); !strings.Contains(s, "Answered by token-file (http)") {
			t.Errorf("card state %q", s)
		}
	})

	t.Run("URLOpenedOnlyOnClick", func(t *testing.T) {
		r.send(t, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"web-q","prompt":[{"type":"text","text":"push"}]}}`)
		run(t, chromedp.WaitVisible(card+` a.open-link`))
		text := eval(t, `document.querySelector('.card.open.question').innerText`)
		if origin := eval(t, `document.querySelector('.card.open.question .origin').innerText`); origin != site.URL {
			t.Errorf("origin shown %q, want %q", origin, site.URL)
		}
		if !strings.Contains(text, loginURL) {
			t.Errorf("the full URL is not shown:\n%s", text)
		}
		// Round trip through the page's server: whatever the page did when
		// it drew the card has reached the network by now.
		eval(t, `(async () => String((await fetch('/v1/sessions', {credentials: 'same-origin'})).status))()`)
		select {
		case h := <-hits:
			t.Fatalf("the page opened %s before any click", h)
		default:
		}
		run(t, chromedp.Click(card+` a.open-link`))
		select {
		case h := <-hits:
			if h != "/login?next=%2Fregistry&user=me" {
				t.Errorf("opened %s", h)
			}
		case <-ctx.Done():
			t.Fatal("the click did not open the URL")
		}
		run(t, chromedp.Click(card+` button[data-action="accept"]`))
		r.waitFor(t, "")
		run(t, chromedp.WaitNotPresent(`.card.open`))
		if got := agentResult(t, agentLog, "q2"); !reflect.DeepEqual(got, map[string]any{"action": "accept"}) {
			t.Errorf("the agent got %v, want accept without content", got)
		}
	})

	t.Run("HostileTextEscaped", func(t *testing.T) {
		r.send(t, `{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"web-q","prompt":[{"type":"text","text":"again"}]}}`)
		run(t, chromedp.WaitVisible(card+` button[data-action="decline"]`))
		text := eval(t, `document.querySelector('.card.open.question').innerText`)
		for _, want := range []string{"Delete build", `<img src=x onerror="window.__pwned=13">Pick`, `<script>window.__pwned=12</script>desc`,
			`<img src=x onerror="window.__pwned=16">One`, `<svg onload="window.__pwned=17">Two`, `<b onmouseover="window.__pwned=14">hint</b>`} {
			if !strings.Contains(text, want) {
				t.Errorf("the card does not show %q as text:\n%s", want, text)
			}
		}
		run(t, chromedp.Click(field("pick")+` button.choice`)) // the first option, whose value is markup
		if pwned := eval(t, `String(window.__pwned)`); pwned != "undefined" {
			t.Errorf("agent text ran as script: window.__pwned=%s", pwned)
		}
		if n := eval(t, `String(document.querySelectorAll('img, svg, b, script:not([src])').length)`); n != "0" {
			t.Errorf("agent text became %s elements", n)
		}
		run(t, chromedp.Click(card+` button[data-action="accept"]`))
		r.waitFor(t, "")
		want := map[string]any{"action": "accept", "content": map[string]any{"pick": `"><img src=x onerror=window.__pwned=15>`}}
		if got := agentResult(t, agentLog, "q3"); !reflect.DeepEqual(got, want) {
			t.Errorf("the agent got %v, want %v", got, want)
		}
	})
}
