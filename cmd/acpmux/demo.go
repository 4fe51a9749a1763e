package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

func init() {
	register(command{name: "demo", summary: "run the relay on a built-in scripted agent with a terminal host (try this first)", run: demoMain,
		flags: func() *flag.FlagSet { fs, _, _ := demoFlagSet(); return fs }})
}

const demoUsage = `Usage: acpmux demo [flags]

Runs the main job on built-in parts, with nothing else installed: a scripted
ACP agent (it streams text, then asks permission for a shell command and a
file edit) behind the real acpmux relay, and a small terminal host that
prints the transcript and asks you to pick one of the offered options.
Ctrl-C stops it at once: exit status 130, no error text.

"Always allow" is the agent's allow_always option, sent to it as offered.
The demo keeps decisions in memory (--state :memory:): acpmux remembers
nothing past the run and refuses the ALWAYS scope of the decisions API;
--state FILE keeps them.

Flags:
`

// demoOnly are the flags of "acpmux demo" that "run" does not have.
type demoOnly struct{ choose, prompt string }

// demoFlagSet builds the flag set of "acpmux demo": run's flags, with
// --state :memory: and (unless ACPMUX_LOG is set) --log-level warn by
// default, and its own.
func demoFlagSet() (*flag.FlagSet, *relayFlags, *demoOnly) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	f, d := new(relayFlags), new(demoOnly)
	f.register(fs)
	registerConfigFlag(fs)
	fs.Lookup("state").DefValue = ":memory:"
	fs.Lookup("state").Usage = "decision store: a SQLite file, or :memory: to keep nothing on disk"
	if os.Getenv("ACPMUX_LOG") == "" { // the transcript is the demo's output; --log-level info shows the relay's log
		f.logLevel = "warn"
		fs.Lookup("log-level").DefValue = "warn"
	}
	fs.StringVar(&d.choose, "choose", "ask", "how the terminal host answers permission requests: ask (read a number from stdin), allow or reject")
	fs.StringVar(&d.prompt, "prompt", "Please fix the failing test.", "the prompt sent to the demo agent")
	return fs, f, d
}

func demoMain(args []string, s stdio) int {
	fs, f, d := demoFlagSet()
	choose, prompt := &d.choose, &d.prompt
	help := func(w io.Writer) { fmt.Fprint(w, demoUsage); writeFlags(w, fs) }
	if done, code := parseArgs("demo", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "acpmux demo: unexpected argument %q\nRun 'acpmux demo --help' for usage.\n", fs.Arg(0))
		return 2
	}
	if _, _, err := applyConfig("demo", fs); err != nil {
		fmt.Fprintln(s.err, "acpmux demo:", err)
		return 2
	}
	if err := f.validate(); err != nil {
		fmt.Fprintln(s.err, "acpmux demo:", err)
		return 2
	}
	if *choose != "ask" && *choose != "allow" && *choose != "reject" {
		fmt.Fprintf(s.err, "acpmux demo: --choose %q: want ask, allow or reject\n", *choose)
		return 2
	}
	log, closeLog, err := f.logger(s.err)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux demo:", err)
		return loggerStatus(err)
	}
	defer closeLog()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(s.err, "acpmux demo: find own executable:", err)
		return 1
	}
	ctx, received, stop := signalContext()
	defer stop()
	if f.state == "" {
		f.state = sqlite.MemoryPath // the demo leaves nothing behind unless asked
	}
	r, err := startRelay(f, []string{exe, "__demo-agent"}, s.err, log)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux demo:", err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	b := r.bridge
	toBridgeR, toBridgeW := io.Pipe()
	fromBridgeR, fromBridgeW := io.Pipe()
	b.AddHost(bridge.NewHost("terminal", bridge.NewNDJSONConn(toBridgeR, fromBridgeW, toBridgeR, f.maxLineBytes), bridge.HostOptions{Blocking: true, QueueLen: blockingQueueLen(f.queueLen), Kind: "terminal"}))

	host := &terminalHost{out: s.out, in: bufio.NewReader(s.in), choose: *choose}
	stream := &bridge.ObjectStream{C: bridge.NewNDJSONConn(fromBridgeR, toBridgeW, toBridgeW, 0)}
	// jsonrpc2 logs to the standard logger; a response that arrives after
	// Ctrl-C gave up its request ("ignoring response #2 with no
	// corresponding request") is expected then, so its notes go to the
	// debug log, not the terminal.
	conn := jsonrpc2.NewConn(ctx, stream, host, jsonrpc2.SetLogger(slog.NewLogLogger(log.Handler(), slog.LevelDebug)))
	hostErr := make(chan error, 1)
	go func() {
		hostErr <- host.session(ctx, conn, *prompt)
		conn.Close() // the host leaves: the bridge stops the agent
	}()
	code := r.run(ctx)
	fromBridgeW.Close()
	err = <-hostErr
	if sig := received(); sig != 0 {
		return signalStatus(sig) // Ctrl-C: 130, quietly; the turn's end is no error
	}
	if err != nil {
		fmt.Fprintln(s.err, "acpmux demo:", err)
		return 1
	}
	host.wg.Wait()
	if code != 0 {
		fmt.Fprintf(s.err, "acpmux demo: agent exited with status %d\n", code)
	}
	return code
}

// terminalHost is a minimal ACP host on a terminal: it prints session
// updates and asks the user to choose among the offered options.
type terminalHost struct {
	out    io.Writer
	in     *bufio.Reader
	choose string
	wg     sync.WaitGroup // permission prompts being answered
	mu     sync.Mutex     // guards out, pending and promptOpen

	pending map[string]chan struct{} // request id → closed when withdrawn
	// promptOpen is set while "Choose 1-N: " waits on its line: whatever
	// is printed next starts a new line first.
	promptOpen bool
	linesOnce  sync.Once
	lineCh     chan string // stdin lines; closed at EOF
}

// track returns the channel closed when request id is withdrawn.
func (h *terminalHost) track(id string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil {
		h.pending = map[string]chan struct{}{}
	}
	c := make(chan struct{})
	h.pending[id] = c
	return c
}

func (h *terminalHost) untrack(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.pending, id)
}

// cancel withdraws request id ($/cancel_request from acpmux).
func (h *terminalHost) cancel(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.pending[id]; ok {
		close(c)
		delete(h.pending, id)
	}
}

// lines returns stdin's lines; the reader runs until stdin ends (the demo's
// terminal), so a withdrawn prompt need not wait for a line.
func (h *terminalHost) lines() <-chan string {
	h.linesOnce.Do(func() {
		h.lineCh = make(chan string)
		go func() {
			defer close(h.lineCh)
			for {
				line, err := h.in.ReadString('\n')
				if line != "" {
					h.lineCh <- line
				}
				if err != nil {
					return
				}
			}
		}()
	})
	return h.lineCh
}

// session runs initialize, session/new and one prompt turn.
func (h *terminalHost) session(ctx context.Context, conn *jsonrpc2.Conn, prompt string) error {
	var init json.RawMessage
	if err := conn.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "acpmux-demo-host", "version": version}}, &init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	cwd, _ := os.Getwd()
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := conn.Call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &sess); err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	h.printf("acpmux demo: session %s through the acpmux relay\n\n> %s\n\n", sess.SessionID, prompt)
	var res struct {
		StopReason string `json:"stopReason"`
	}
	if err := conn.Call(ctx, "session/prompt", map[string]any{"sessionId": sess.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": prompt}}}, &res); err != nil {
		return fmt.Errorf("session/prompt: %w", err)
	}
	h.printf("\n[turn ended: %s]\n", res.StopReason)
	return nil
}

func (h *terminalHost) printf(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.out, format, a...)
}

// println prints one line, first ending an open "Choose" prompt's line.
func (h *terminalHost) println(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.promptOpen {
		fmt.Fprintln(h.out)
		h.promptOpen = false
	}
	fmt.Fprintf(h.out, format+"\n", a...)
}

// closedLine describes a permission request that closed without the
// terminal's answer: status and reason as acpmux reports them, and what
// the agent got.
func closedLine(status, reason, optionID string) string {
	if optionID == "" {
		return fmt.Sprintf("  (%s before an answer (%s): the agent was told the request was cancelled)", status, reason)
	}
	return fmt.Sprintf("  (%s (%s): the agent got %q)", status, reason, optionID)
}

// Handle implements jsonrpc2.Handler; a permission request is answered on
// a goroutine so the read loop keeps going.
func (h *terminalHost) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var raw json.RawMessage
	if req.Params != nil {
		raw = *req.Params
	}
	switch req.Method {
	case "session/update":
		h.update(raw)
	case "session/request_permission":
		cancel := h.track(req.ID.String())
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer h.untrack(req.ID.String())
			if res := h.permission(raw, cancel); res != nil {
				conn.Reply(ctx, req.ID, res)
			} else {
				conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: -32800, Message: "request cancelled"})
			}
		}()
	case "$/cancel_request":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(raw, &p)
		h.cancel(strings.Trim(string(p.RequestID), `"`))
	case "_acpmux/permission_resolved":
		var p struct {
			Status, OptionID, ResolvedBy, AnsweredBy, Reason string
		}
		json.Unmarshal(raw, &p)
		if p.ResolvedBy != "" && p.ResolvedBy != "terminal" {
			h.println("  [answered by %s: %s]", answerer(p.AnsweredBy, p.ResolvedBy), p.OptionID)
		} else if p.Status != "answered" {
			h.println("%s", closedLine(p.Status, p.Reason, p.OptionID))
		}
	default:
		if !req.Notif {
			conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "the demo host does not serve " + req.Method})
		}
	}
}

func (h *terminalHost) update(raw json.RawMessage) {
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
			Title      string `json:"title"`
			Kind       string `json:"kind"`
			Status     string `json:"status"`
			ToolCallID string `json:"toolCallId"`
		} `json:"update"`
	}
	json.Unmarshal(raw, &p)
	u := p.Update
	switch u.SessionUpdate {
	case "agent_message_chunk":
		h.printf("%s", u.Content.Text)
	case "tool_call":
		h.printf("\n[tool %s: %s (%s), %s]\n", u.ToolCallID, u.Title, u.Kind, u.Status)
	case "tool_call_update":
		h.printf("[tool %s: %s]\n", u.ToolCallID, u.Status)
	}
}

// permission shows the request and returns the outcome: the chosen
// optionId, exactly as offered, or the first reject option when the user
// gives no valid answer (fail closed); nil when acpmux withdrew it first.
func (h *terminalHost) permission(raw json.RawMessage, withdrawn <-chan struct{}) map[string]any {
	var p struct {
		ToolCall struct {
			Title    string          `json:"title"`
			Kind     string          `json:"kind"`
			RawInput json.RawMessage `json:"rawInput"`
			Content  []struct {
				Type    string `json:"type"`
				Path    string `json:"path"`
				OldText string `json:"oldText"`
				NewText string `json:"newText"`
			} `json:"content"`
		} `json:"toolCall"`
		Options []struct {
			OptionID string `json:"optionId"`
			Name     string `json:"name"`
			Kind     string `json:"kind"`
		} `json:"options"`
		Meta struct {
			Acpmux struct {
				Warnings       []string `json:"warnings"`
				Classification *struct {
					Class string `json:"class"`
				} `json:"classification"`
			} `json:"acpmux"`
		} `json:"_meta"`
	}
	json.Unmarshal(raw, &p)
	h.mu.Lock()
	fmt.Fprintf(h.out, "\n  Permission requested: %s (%s)\n", strconv.Quote(p.ToolCall.Title), p.ToolCall.Kind)
	if len(p.ToolCall.RawInput) > 0 {
		fmt.Fprintf(h.out, "  input: %s\n", p.ToolCall.RawInput)
	}
	if c := p.Meta.Acpmux.Classification; c != nil {
		fmt.Fprintf(h.out, "  acpmux classifies the command as: %s\n", c.Class)
	}
	for _, w := range p.Meta.Acpmux.Warnings {
		fmt.Fprintf(h.out, "  warning: %s\n", w)
	}
	for _, c := range p.ToolCall.Content {
		if c.Type == "diff" {
			fmt.Fprintf(h.out, "  diff %s:\n    - %s\n    + %s\n", c.Path, c.OldText, c.NewText)
		}
	}
	reject := -1
	for i, o := range p.Options {
		fmt.Fprintf(h.out, "    %d. %s (%s, optionId %q)\n", i+1, o.Name, o.Kind, o.OptionID)
		if reject < 0 && strings.HasPrefix(o.Kind, "reject") {
			reject = i
		}
	}
	pick := -1
	for i, o := range p.Options {
		if (h.choose == "allow" && o.Kind == "allow_once") || (h.choose == "reject" && i == reject) {
			pick = i
			break
		}
	}
	h.mu.Unlock()
	for pick < 0 && h.choose == "ask" {
		h.mu.Lock()
		fmt.Fprintf(h.out, "  Choose 1-%d: ", len(p.Options))
		h.promptOpen = true
		h.mu.Unlock()
		select {
		case <-withdrawn:
			// _acpmux/permission_resolved says how it closed, in one line.
			h.mu.Lock()
			if h.promptOpen {
				fmt.Fprintln(h.out)
				h.promptOpen = false
			}
			h.mu.Unlock()
			return nil
		case line, ok := <-h.lines():
			h.mu.Lock()
			h.promptOpen = false // the user's Enter ended the line
			h.mu.Unlock()
			if n, perr := strconv.Atoi(strings.TrimSpace(line)); ok && perr == nil && n >= 1 && n <= len(p.Options) {
				pick = n - 1
				continue
			}
			if !ok {
				h.printf("\n  (no answer on stdin: rejecting)\n")
			} else {
				h.printf("  Please type the number of an option.\n")
				continue
			}
		}
		break
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if pick < 0 {
		pick = reject
	}
	if pick < 0 {
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
	}
	fmt.Fprintf(h.out, "  -> %s\n", p.Options[pick].Name)
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": p.Options[pick].OptionID}}
}
