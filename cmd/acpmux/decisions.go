package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/hidden"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
)

func init() {
	register(command{name: "decisions", summary: "list, show, answer and watch pending confirmations through the HTTP API", run: decisionsMain})
}

const decisionsUsage = `Usage:
  acpmux decisions list   [--session ID [--bridge ID]] [--status S] [flags]
  acpmux decisions show   DECISION_ID [--session ID [--bridge ID]] [flags]
  acpmux decisions answer DECISION_ID [--session ID [--bridge ID]] (--option OPTION_ID | --text TEXT) [--scope S] [flags]
  acpmux decisions watch  [--json] [--after N] [flags]
  acpmux decisions answer DECISION_ID [--session ID [--bridge ID]] --action A [--field NAME=VALUE ... | --content JSON] [flags]

Talks to the decisions HTTP API of a running "acpmux run --listen ADDR" (or
"acpmux inbox --listen ADDR") to
answer the agent's permission requests from a terminal or a script.

  list    the decisions of one session (--session), or of every session
          (of every bridge sharing the store: docs/inbox.md);
          --status open|answered|timed_out|cancelled filters them;
          --bridge ID names the bridge of a --session several bridges use
  show    one decision: the command, warnings, offered options, journal;
          without --session it is looked up in every session;
          in a shared store list has a BRIDGE column and show a bridge line
  answer  answer with an offered optionId (--option), free text (--text,
          only when the decision allows it), or both; a question (the
          agent's elicitation) with --action accept|decline|cancel and,
          for accept, --field name=value (repeatable, typed by the
          question's schema) or --content JSON; --scope ONCE, SESSION
          or ALWAYS remembers an allow or reject for the session or for
          good (docs/policy.md, "Scopes")
  watch   print the API's events (GET /v1/events) as they happen, one line
          each (--json: the event's JSON), reconnecting where it left off

Exit status: 0 success (also an answer identical to the recorded one);
1 the server refused or failed (not found, conflict, invalid answer,
unreachable); 2 usage error.

Flags:
`

// decisionsFlags are the flags of every decisions subcommand.
type decisionsFlags struct {
	url, tokenFile, session, status, option, text string
	action, content, scope                        string
	after                                         int64
	fields                                        fieldList
	asJSON                                        bool
	timeout                                       time.Duration
	bridge                                        string // ?bridge= of a shared store (docs/decisions.md, "Many bridges")
}

func (f *decisionsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "url", os.Getenv("ACPMUX_URL"), "base URL of the API, e.g. http://127.0.0.1:7777, or the approvals page link with its ?token= (then that token is used) (env ACPMUX_URL)")
	fs.StringVar(&f.tokenFile, "token-file", os.Getenv("ACPMUX_TOKEN_FILE"), "file holding the bearer token (env ACPMUX_TOKEN_FILE; default $XDG_STATE_HOME/acpmux/token)")
	fs.StringVar(&f.session, "session", "", "ACP session id of the decision (show and answer find it when omitted, asking every session)")
	fs.StringVar(&f.bridge, "bridge", "", "the bridge id of --session when several bridges sharing the store use that session id (the API answers 409 with the candidates)")
	fs.StringVar(&f.status, "status", "", "list: only decisions with this status")
	fs.StringVar(&f.option, "option", "", "answer: the optionId to choose, exactly as offered")
	fs.StringVar(&f.text, "text", "", "answer: free text, when the decision allows it")
	fs.StringVar(&f.scope, "scope", "", "answer: remember the answer: ONCE (the default), SESSION or ALWAYS")
	f.after = -1 // only new events; --after is eventIDFlag (hints.go)
	fs.Var(eventIDFlag{&f.after}, "after", "watch: first replay the stored events after event `N` (0: all that are kept; without it only new events)")
	fs.StringVar(&f.action, "action", "", "answer a question: accept, decline or cancel")
	fs.Var(&f.fields, "field", "answer a question: `NAME=VALUE` of one property (repeatable)")
	fs.StringVar(&f.content, "content", "", "answer a question: the content as one JSON object")
	fs.BoolVar(&f.asJSON, "json", false, "print the API's JSON instead of text")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "HTTP request timeout")
}

func decisionsMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("decisions", flag.ContinueOnError)
	var f decisionsFlags
	f.register(fs)
	help := func(w io.Writer) {
		fmt.Fprint(w, decisionsUsage)
		writeFlags(w, fs)
		fmt.Fprint(w, decisionsExamples)
	}
	var pos []string
	if done, code := parseArgs("decisions", fs, s, help, func() (err error) { pos, err = parseInterleaved(fs, args); return err }); done {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprint(s.err, "acpmux decisions: missing subcommand (list, show, answer or watch)\nRun 'acpmux decisions --help' for usage.\n")
		return 2
	}
	if msg := f.check(pos); msg != "" {
		fmt.Fprintln(s.err, "acpmux decisions:", msg)
		return 2
	}
	c, err := newAPIClient(f)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux decisions:", err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	switch pos[0] {
	case "list":
		err = c.list(s.out, f)
	case "show":
		err = c.show(s.out, f, pos[1])
	case "answer":
		err = c.answer(s.out, f, pos[1])
	case "watch":
		err = c.watch(s.out, s.err, f) // decisions_watch.go
	}
	if err != nil {
		fmt.Fprintln(s.err, "acpmux decisions:", httpapi.UserMessage(err))
		return 1
	}
	return 0
}

const decisionsExamples = `
Examples:
  acpmux decisions list --url http://127.0.0.1:7777 --status open
  acpmux decisions show 0b6f...  --session sess_1 --url http://127.0.0.1:7777
  acpmux decisions answer 0b6f... --session sess_1 --option allow
  acpmux decisions watch --url http://127.0.0.1:7777 --after 0
`

// check validates the subcommand and its arguments; it returns a usage
// message or "".
func (f *decisionsFlags) check(pos []string) string {
	switch pos[0] {
	case "list":
		if len(pos) != 1 {
			return "list takes no arguments"
		}
		switch store.Status(f.status) {
		case "", store.StatusOpen, store.StatusAnswered, store.StatusTimedOut, store.StatusCancelled:
		default:
			return "--status must be open, answered, timed_out or cancelled"
		}
	case "show", "answer":
		if len(pos) != 2 {
			return pos[0] + " takes exactly one DECISION_ID"
		}
		if msg := f.checkScope(pos[0]); msg != "" { // decisions_conflict.go
			return msg
		}
		if pos[0] == "answer" && f.action != "" && (f.option != "" || f.text != "") {
			return "--action answers a question; --option and --text a permission request: not both"
		}
		if pos[0] == "answer" && f.action == "" && (len(f.fields) > 0 || f.content != "") {
			return "--field and --content need --action"
		}
		if len(f.fields) > 0 && f.content != "" {
			return "give --field or --content, not both"
		}
		if pos[0] == "answer" && f.option == "" && f.text == "" && f.action == "" {
			return "answer needs --option or --text (a question: --action)"
		}
	case "watch":
		if len(pos) != 1 {
			return "watch takes no arguments"
		}
	default:
		return fmt.Sprintf("unknown subcommand %q (want list, show, answer or watch)", pos[0])
	}
	if f.url == "" {
		return "--url is required (or set ACPMUX_URL)"
	}
	return ""
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("show ID --session S") and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// apiClient calls the decisions API.
type apiClient struct {
	base  *url.URL
	token string
	http  *http.Client
}

func newAPIClient(f decisionsFlags) (*apiClient, error) {
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Errorf("--url %q: want http://HOST:PORT or the approvals page link", f.url)}
	}
	// The approvals page link (http://HOST:PORT/?token=…) works too: its
	// token is used, and only the scheme and host are kept.
	if tok := u.Query().Get("token"); tok != "" {
		return &apiClient{base: &url.URL{Scheme: u.Scheme, Host: u.Host}, token: tok, http: &http.Client{Timeout: f.timeout}}, nil
	}
	u.RawQuery, u.Fragment, u.Path = "", "", strings.TrimRight(u.Path, "/")
	tokenFile := f.tokenFile
	if tokenFile == "" {
		tokenFile, _ = httpapi.DefaultTokenPath()
	}
	b, err := os.ReadFile(tokenFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no token file %s: pass the --token-file that acpmux run --listen wrote, or --url with the approvals page link (its ?token=)", tokenFile)
	}
	if err != nil {
		return nil, fmt.Errorf("read token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return nil, fmt.Errorf("token file %s is empty", tokenFile)
	}
	return &apiClient{base: u, token: tok, http: &http.Client{Timeout: f.timeout}}, nil
}

// apiError is an error response of the API. Its text is the server's
// message, then the machine-readable code and the HTTP status in
// parentheses: "content.count: must be at most 10 (invalid_answer, HTTP
// 400)".
type apiError struct {
	status       int
	code, msg    string
	decisionStat string
	decision     *confirm.View       // the decision of a 409
	candidates   []confirm.BridgeRef // the bridges of a 409 ambiguous_session
}

func (e *apiError) Error() string {
	if e.status == http.StatusConflict {
		return conflictSentence(e) // decisions_conflict.go
	}
	if e.status == http.StatusNotFound && e.code == "not_found" && e.msg != "" {
		return e.msg // one sentence: "no decision X in session S"
	}
	s := e.msg
	if e.decisionStat != "" {
		s += "; the decision is " + e.decisionStat
	}
	return fmt.Sprintf("%s (%s, HTTP %d)", s, e.code, e.status)
}

// do sends one request and decodes a 200 body into out (raw JSON kept in
// *raw when not nil).
func (c *apiClient) do(method, path string, body any, out any, raw *json.RawMessage) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base.String()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return unreachable(c.base.String(), err) // hints.go
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e httpapi.ErrorBody
		ae := &apiError{status: resp.StatusCode, code: "http_error", msg: strings.TrimSpace(string(data))}
		if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
			ae.code, ae.msg = e.Error.Code, e.Error.Message
			if e.Decision != nil {
				ae.decisionStat, ae.decision = string(e.Decision.Status), e.Decision
			}
			ae.candidates = ambiguousCandidates(ae.code, data) // decisions_conflict.go
		}
		return ae
	}
	if raw != nil {
		*raw = data
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

func decisionPath(f decisionsFlags, id string) string {
	return "/v1/sessions/" + url.PathEscape(f.session) + "/decisions/" + url.PathEscape(id) + bridgeQuery(f.bridge, "?")
}

// bridgeQuery is the ?bridge= (or &bridge=, after sep "&") of bridge id, or "".
func bridgeQuery(id, sep string) string {
	if id == "" {
		return ""
	}
	return sep + "bridge=" + url.QueryEscape(id)
}

func (c *apiClient) list(w io.Writer, f decisionsFlags) error {
	type target struct{ session, bridge string }
	sessions := []target{{f.session, f.bridge}}
	if f.session == "" {
		var ss struct{ Sessions []confirm.SessionView }
		if err := c.do("GET", "/v1/sessions", nil, &ss, nil); err != nil {
			return err
		}
		sessions = sessions[:0]
		for _, s := range ss.Sessions {
			t := target{session: s.SessionID}
			if s.Bridge != nil {
				t.bridge = s.Bridge.ID
			}
			sessions = append(sessions, t)
		}
	}
	all := []confirm.View{}
	for _, st := range sessions {
		var ds struct{ Decisions []confirm.View }
		q := "?status=" + url.QueryEscape(f.status) + bridgeQuery(st.bridge, "&")
		if err := c.do("GET", "/v1/sessions/"+url.PathEscape(st.session)+"/decisions"+q, nil, &ds, nil); err != nil {
			return fmt.Errorf("session %s: %w", st.session, err)
		}
		all = append(all, ds.Decisions...)
	}
	if f.asJSON {
		return writeIndented(w, map[string]any{"decisions": all})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	shared := slices.ContainsFunc(all, func(v confirm.View) bool { return v.Bridge != nil })
	if shared {
		fmt.Fprint(tw, "BRIDGE\t")
	}
	fmt.Fprintln(tw, "SESSION\tDECISION\tSTATUS\tCREATED\tTITLE")
	for _, v := range all {
		if shared {
			fmt.Fprintf(tw, "%s\t", bridgeLabel(v.Bridge)) // decisions_conflict.go
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.SessionID, v.ID, v.Status, v.CreatedAt.Local().Format(time.DateTime), oneLine(v.Title, 60))
	}
	return tw.Flush()
}

func (c *apiClient) show(w io.Writer, f decisionsFlags, id string) error {
	var v confirm.View
	var raw json.RawMessage
	if f.session == "" {
		sid, bid, err := c.findSession(id) // decisions_conflict.go
		if err != nil {
			return err
		}
		f.session, f.bridge = sid, bid
	}
	if err := c.do("GET", decisionPath(f, id), nil, &v, &raw); err != nil {
		return err
	}
	if f.asJSON {
		return writeIndented(w, raw)
	}
	if v.Kind == question.Kind {
		var q questionJSON
		if err := json.Unmarshal(raw, &q); err != nil {
			return fmt.Errorf("decode question: %w", err)
		}
		printQuestion(trimmed{w}, q) // columns.go
		return nil
	}
	printDecision(trimmed{w}, v) // columns.go
	return nil
}

func (c *apiClient) answer(w io.Writer, f decisionsFlags, id string) error {
	if f.session == "" {
		sid, bid, err := c.findSession(id) // decisions_conflict.go
		if err != nil {
			return err
		}
		f.session, f.bridge = sid, bid
	}
	if f.action != "" {
		return c.answerQuestion(w, f, id)
	}
	var resp httpapi.AnswerResponse
	var raw json.RawMessage
	body := confirm.Answer{OptionID: f.option, Text: f.text, Scope: policy.Scope(strings.ToUpper(f.scope))}
	if err := c.do("POST", decisionPath(f, id), body, &resp, &raw); err != nil {
		return questionHint(err, id) // hints.go
	}
	if f.asJSON {
		return writeIndented(w, raw)
	}
	note := ""
	if resp.Deduped {
		note = " (already recorded: same answer)"
	}
	fmt.Fprintf(w, "decision %s %s by %s: %s%s\n", resp.ID, resp.Status, answerer(answeredPerson(resp.AnsweredBy, resp.Events), resp.ResolvedBy), describeAnswer(resp.Answer), note)
	return nil
}

func describeAnswer(a *confirm.Answer) string {
	switch {
	case a == nil:
		return "no answer"
	case a.Text == "":
		return "option " + a.OptionID
	case a.OptionID == "":
		return fmt.Sprintf("text %q", a.Text)
	}
	return fmt.Sprintf("option %s, text %q", a.OptionID, a.Text)
}

// printDecision writes v for a human. Text from the agent is printed
// through safe, so a command cannot hide part of itself on the terminal.
func printDecision(w io.Writer, v confirm.View) {
	fmt.Fprintf(w, "decision  %s\nsession   %s\n", v.ID, v.SessionID)
	if v.Bridge != nil {
		fmt.Fprintf(w, "bridge    %s\n", bridgeLabel(v.Bridge)) // decisions_conflict.go
	}
	fmt.Fprintf(w, "status    %s", v.Status)
	if v.Reason != "" {
		fmt.Fprintf(w, " (%s)", v.Reason)
	}
	fmt.Fprintf(w, "\ntitle     %s\n", safe(v.Title))
	if v.Command != "" {
		fmt.Fprintf(w, "command   %s\n", safe(v.Command))
	}
	if v.Classification != nil {
		fmt.Fprintf(w, "class     %s %v\n", v.Classification.Class, v.Classification.Reasons)
	}
	for _, x := range v.Warnings {
		fmt.Fprintf(w, "WARNING   %s\n", safe(x))
	}
	fmt.Fprintf(w, "cwd       %s\ncreated   %s\ndeadline  %s\noptions:\n", safe(v.Cwd),
		v.CreatedAt.Local().Format(time.RFC3339), v.Deadline.Local().Format(time.RFC3339))
	opts := make([][]string, 0, len(v.Options))
	for _, o := range v.Options {
		mark := " "
		if v.Answer != nil && v.Answer.OptionID == o.OptionID {
			mark = "*"
		}
		opts = append(opts, []string{mark + " --option " + safe(o.OptionID), "[" + string(o.Kind) + "]", safe(o.Name)})
	}
	writeColumns(w, "  ", opts) // columns.go
	if v.AllowFreeText {
		fmt.Fprintln(w, "  (free text allowed: --text)")
	}
	if v.Answer != nil {
		fmt.Fprintf(w, "answer    %s by %s\n", describeAnswer(v.Answer), answerer(answeredPerson(v.AnsweredBy, v.Events), v.ResolvedBy))
	}
	fmt.Fprintln(w, "journal:")
	writeJournal(w, v.Events) // columns.go
}

// safe returns s as it is, or, when it holds a hidden character
// (hidden.Rune: controls, format, bidi and zero-width characters,
// unusual spaces, variation selectors, ...), s in double quotes with
// backslash and quote escaped and every hidden character written as
// \uXXXX or \UXXXXXXXX (hidden.Escape). Every command prints text
// from the agent through it, so nothing can hide part of itself on a
// terminal.
func safe(s string) string {
	if !strings.ContainsFunc(s, hidden.Rune) {
		return s
	}
	return `"` + hidden.Escape(quoteEscaper.Replace(s)) + `"`
}

var quoteEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func oneLine(s string, max int) string {
	r := []rune(safe(s))
	if len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return string(r)
}

func writeIndented(w io.Writer, v any) error {
	var b []byte
	var err error
	if raw, ok := v.(json.RawMessage); ok {
		var buf bytes.Buffer
		err = json.Indent(&buf, raw, "", "  ")
		b = buf.Bytes()
	} else {
		b, err = json.MarshalIndent(v, "", "  ")
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
