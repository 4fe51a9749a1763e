package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/acpmux/acpmux/bridge"
)

func init() {
	register(command{name: "replay", summary: "print a --record transcript readably", run: replayMain})
}

const replayUsage = `Usage: acpmux replay [--json] FILE

Prints the transcript "acpmux run --record FILE" wrote, one line per
message: the time, who sent it to whom (a host id, acpmux, the agent), the
kind (request, notification, response), the id and method, and a short
summary (the session, the update kind, a prompt's or chunk's first text,
a tool call's title, a stop reason, an error). FILE "-" reads stdin.
With --json, each entry is printed as the one JSON object it is in FILE
(redacted when it was recorded). See docs/record.md.

Exit status: 0 success, 1 the file could not be read or holds a line that
is not a transcript entry, 2 usage error.

Flags:
`

func replayMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the entries as JSON, one per line")
	help := func(w io.Writer) { fmt.Fprint(w, replayUsage); writeFlags(w, fs) }
	if done, code := parseArgs("replay", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprint(s.err, "acpmux replay: want exactly one FILE\nRun 'acpmux replay --help' for usage.\n")
		return 2
	}
	in := s.in
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(s.err, "acpmux replay:", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	if err := replay(s.out, in, *asJSON); err != nil {
		fmt.Fprintln(s.err, "acpmux replay:", err)
		return 1
	}
	return 0
}

// replay prints every entry of the transcript in r.
func replay(w io.Writer, r io.Reader, asJSON bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	for n := 1; sc.Scan(); n++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var e bridge.RecordEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Dir == "" {
			return fmt.Errorf("line %d: not a transcript entry", n)
		}
		if asJSON {
			b, _ := json.Marshal(e)
			fmt.Fprintf(bw, "%s\n", b)
			continue
		}
		fmt.Fprintln(bw, replayLine(e))
	}
	return sc.Err()
}

// replayLine is one entry for a person.
func replayLine(e bridge.RecordEntry) string {
	at := e.Time.Local().Format("15:04:05.000")
	if e.Dir == bridge.DirDropped {
		return fmt.Sprintf("%s  -- %d messages not recorded (the file was slower than the relay) --", at, e.Dropped)
	}
	from, to := "acpmux", "acpmux"
	switch e.Dir {
	case bridge.FromHost, bridge.FromAgent:
		from = e.Host
	default:
		to = e.Host
	}
	head := fmt.Sprintf("%s  %-24s", at, safe(from)+" → "+safe(to))
	if e.Msg == nil {
		return head + "  text " + oneLine(fmt.Sprintf("%q", e.Text), 100)
	}
	return head + "  " + summarize(e.Msg)
}

// rpcMessage is what replay reads of a JSON-RPC message.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// summarize is the kind, id, method and a short summary of msg.
func summarize(msg json.RawMessage) string {
	var m rpcMessage
	if json.Unmarshal(msg, &m) != nil {
		return "json " + oneLine(string(msg), 100)
	}
	id := ""
	if len(m.ID) > 0 && string(m.ID) != "null" {
		id = " #" + string(m.ID)
	}
	switch {
	case m.Method != "" && id != "":
		return "request" + id + " " + safe(m.Method) + summaryOf(m.Params)
	case m.Method != "":
		return "notification " + safe(m.Method) + summaryOf(m.Params)
	case m.Error != nil:
		return fmt.Sprintf("response%s error %d %s", id, m.Error.Code, oneLine(m.Error.Message, 80))
	default:
		return "response" + id + summaryOf(m.Result)
	}
}

// summaryOf picks the telling members of params or a result.
func summaryOf(raw json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
		Update    *struct {
			SessionUpdate string          `json:"sessionUpdate"`
			Content       json.RawMessage `json:"content"`
			Title         string          `json:"title"`
			Status        string          `json:"status"`
			ModeID        string          `json:"currentModeId"`
		} `json:"update"`
		Prompt     []struct{ Text string } `json:"prompt"`
		ToolCall   *struct{ Title string } `json:"toolCall"`
		ModeID     string                  `json:"modeId"`
		StopReason string                  `json:"stopReason"`
		Outcome    *struct {
			Outcome  string `json:"outcome"`
			OptionID string `json:"optionId"`
		} `json:"outcome"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return ""
	}
	var parts []string
	add := func(format string, a ...any) { parts = append(parts, fmt.Sprintf(format, a...)) }
	if p.SessionID != "" {
		add("session=%s", safe(p.SessionID))
	}
	if u := p.Update; u != nil {
		add("%s", safe(u.SessionUpdate))
		var c struct{ Text string }
		if json.Unmarshal(u.Content, &c) == nil && c.Text != "" {
			add("%s", oneLine(fmt.Sprintf("%q", c.Text), 60))
		}
		for _, v := range []string{u.Title, u.Status, u.ModeID} {
			if v != "" {
				add("%s", oneLine(v, 60))
			}
		}
	}
	if len(p.Prompt) > 0 && p.Prompt[0].Text != "" {
		add("%s", oneLine(fmt.Sprintf("%q", p.Prompt[0].Text), 60))
	}
	if p.ToolCall != nil {
		add("%s", oneLine(fmt.Sprintf("%q", p.ToolCall.Title), 60))
	}
	if p.ModeID != "" {
		add("mode=%s", safe(p.ModeID))
	}
	if p.StopReason != "" {
		add("stopReason=%s", safe(p.StopReason))
	}
	if o := p.Outcome; o != nil {
		add("outcome=%s", strings.TrimSpace(safe(o.Outcome)+" "+safe(o.OptionID)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + strings.Join(parts, " ")
}
