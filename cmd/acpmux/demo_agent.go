package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acpmux/acpmux/bridge"
)

func init() {
	register(command{name: "__demo-agent", hidden: true, summary: "the scripted ACP agent behind 'acpmux demo'", run: demoAgentMain})
}

// demoAgentMain is a scripted ACP agent with no model: each prompt turn
// streams a few words, then asks permission for a shell command and for a
// file edit, and reports what the host chose. It speaks ACP on stdio.
func demoAgentMain(args []string, s stdio) int {
	ctx := context.Background()
	in, closer := pollableStdin(s.in)
	stream := &bridge.ObjectStream{C: bridge.NewNDJSONConn(in, s.out, closer, 0)}
	a := &demoAgent{}
	// The library's own log lines ("ignoring response …" when acpmux
	// withdraws a request at Ctrl-C) are not for the demo's user.
	conn := jsonrpc2.NewConn(ctx, stream, a, jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	<-conn.DisconnectNotify()
	a.wg.Wait()
	return 0
}

type demoAgent struct {
	wg sync.WaitGroup // prompt turns in progress

	mu        sync.Mutex // guards cancelled
	cancelled map[string]bool
}

// Handle implements jsonrpc2.Handler. It never blocks: a prompt turn runs on
// its own goroutine, which replies when the turn ends.
func (a *demoAgent) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var params struct {
		SessionID string `json:"sessionId"`
	}
	if req.Params != nil {
		json.Unmarshal(*req.Params, &params)
	}
	switch req.Method {
	case "initialize":
		conn.Reply(ctx, req.ID, map[string]any{
			"protocolVersion":   1,
			"agentCapabilities": map[string]any{"loadSession": false},
			"agentInfo":         map[string]any{"name": "acpmux-demo-agent", "version": version},
			"authMethods":       []any{},
		})
	case "session/new":
		conn.Reply(ctx, req.ID, map[string]any{"sessionId": demoSessionID(time.Now())})
	case "session/prompt":
		a.mu.Lock()
		delete(a.cancelled, params.SessionID)
		a.mu.Unlock()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			stop := a.turn(ctx, conn, params.SessionID)
			conn.Reply(ctx, req.ID, map[string]any{"stopReason": stop})
		}()
	case "session/cancel":
		a.mu.Lock()
		if a.cancelled == nil {
			a.cancelled = map[string]bool{}
		}
		a.cancelled[params.SessionID] = true
		a.mu.Unlock()
	default:
		if !req.Notif {
			conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not found: " + req.Method})
		}
	}
}

// demoSessionID returns a new session id for the demo agent:
// "demo-HHMMSS-" (the local time now) and 8 random hex digits, so that two
// demos started in the same second (sharing a --state) never share one.
func demoSessionID(now time.Time) string {
	var raw [4]byte
	rand.Read(raw[:]) // never fails (crypto/rand)
	return "demo-" + now.Format("150405") + "-" + hex.EncodeToString(raw[:])
}

func (a *demoAgent) isCancelled(sid string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cancelled[sid]
}

// turn plays the scripted prompt turn and returns its stopReason.
func (a *demoAgent) turn(ctx context.Context, conn *jsonrpc2.Conn, sid string) string {
	say := func(text string) {
		conn.Notify(ctx, "session/update", map[string]any{"sessionId": sid, "update": map[string]any{
			"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}}})
		time.Sleep(40 * time.Millisecond)
	}
	for _, w := range []string{"I'll ", "look ", "at ", "the ", "tests ", "first, ", "then ", "fix ", "the ", "config.\n"} {
		say(w)
	}
	steps := []struct {
		id, title, kind string
		rawInput        map[string]any
		content         []any
	}{
		{"call_1", "go test ./...", "execute", map[string]any{"command": "go test ./..."}, nil},
		{"call_2", "Edit config.json", "edit", map[string]any{"path": "/demo/config.json"},
			[]any{map[string]any{"type": "diff", "path": "/demo/config.json", "oldText": `{"retries": 1}`, "newText": `{"retries": 3}`}}},
	}
	for _, st := range steps {
		if a.isCancelled(sid) {
			return "cancelled"
		}
		call := map[string]any{"toolCallId": st.id, "title": st.title, "kind": st.kind, "status": "pending", "rawInput": st.rawInput}
		if st.content != nil {
			call["content"] = st.content
		}
		update := map[string]any{"sessionUpdate": "tool_call"}
		for k, v := range call {
			update[k] = v
		}
		conn.Notify(ctx, "session/update", map[string]any{"sessionId": sid, "update": update})
		var resp struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
			Meta struct {
				Acpmux struct {
					Message string `json:"message"` // why acpmux's gate decided (plan mode, a policy rule)
				} `json:"acpmux"`
			} `json:"_meta"`
		}
		err := conn.Call(ctx, "session/request_permission", map[string]any{
			"sessionId": sid,
			"toolCall":  call,
			"options": []any{
				map[string]any{"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
				map[string]any{"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
				map[string]any{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
			},
		}, &resp)
		status, text := "failed", "Permission request failed; skipping.\n"
		switch {
		case err != nil:
		case resp.Outcome.Outcome == "cancelled":
			return "cancelled"
		case resp.Outcome.OptionID == "allow" || resp.Outcome.OptionID == "allow-always":
			status, text = "completed", "Done: "+strings.TrimSuffix(st.title, ".")+".\n"
		case resp.Outcome.OptionID == "reject" && resp.Meta.Acpmux.Message != "":
			text = "Skipped: " + st.title + " (rejected: " + strings.TrimSuffix(resp.Meta.Acpmux.Message, ".") + ").\n"
		case resp.Outcome.OptionID == "reject":
			text = "Skipped: " + st.title + " (rejected).\n"
		default:
			text = "Unexpected option " + resp.Outcome.OptionID + "; not running it.\n"
		}
		conn.Notify(ctx, "session/update", map[string]any{"sessionId": sid, "update": map[string]any{
			"sessionUpdate": "tool_call_update", "toolCallId": st.id, "status": status}})
		say(text)
	}
	return "end_turn"
}

var _ = os.Stdin
