package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/bridge"
)

// teammateFlags are a lead's settings for its teammates (docs/teammates.md).
type teammateFlags struct {
	allowPrompts bool
}

func (f *teammateFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.allowPrompts, "allow-teammate-prompts", false, "as a lead: let this acpmux's hosts prompt (and cancel) a teammate's session teammate:NAME/SESSION; off, a teammate's transcript is read-only here (docs/teammates.md)")
}

// teammateOptions adds the teammate settings to the bridge's options: a
// teammate (--upstream) forwards its agent's session/update stream to the
// lead; a lead with --allow-teammate-prompts lets its hosts prompt its
// teammates.
func (r *relay) teammateOptions(f *relayFlags, o bridge.Options) bridge.Options {
	if r.up != nil {
		o.Watch = r.up.Update
	}
	o.AllowTeammatePrompts = f.teammate.allowPrompts
	return o
}

// leadPrompts runs the prompt turns a lead asks a teammate for: each as an
// in-process driver host of the teammate's bridge that joins the session
// (session/attach, historyPolicy none) and sends session/prompt, so the
// teammate's own hosts see the prompt echoed and the turn as usual, and
// the teammate's confirmations are decided as always.
type leadPrompts struct {
	r            *relay
	maxLineBytes int
	seq          atomic.Int64

	mu      sync.Mutex                // guards running
	running map[string]*io.PipeWriter // session id → the writer of its prompting host
}

// prompt implements upstream.Options.Prompt.
func (p *leadPrompts) prompt(ctx context.Context, sid string, prompt json.RawMessage) (json.RawMessage, error) {
	fromBridge, bw := io.Pipe()
	br, toBridge := io.Pipe()
	conn := bridge.NewNDJSONConn(br, bw, closerFunc(func() error { br.Close(); return bw.Close() }), p.maxLineBytes)
	h := bridge.NewHost("lead-prompt-"+strconv.FormatInt(p.seq.Add(1), 10), conn, bridge.HostOptions{Driver: true, Kind: "upstream"})
	if err := p.r.bridge.AddHost(h); err != nil {
		return nil, err
	}
	defer toBridge.Close() // ends the host
	responses := make(chan json.RawMessage, 2)
	go func() {
		defer close(responses)
		sc := bufio.NewScanner(fromBridge)
		sc.Buffer(make([]byte, 64<<10), max(p.maxLineBytes, 1<<20))
		for sc.Scan() {
			env, err := acp.Parse(sc.Bytes())
			if err == nil && env.Kind == acp.KindResponse {
				responses <- append(json.RawMessage(nil), sc.Bytes()...)
			}
			// Updates and anything else: the lead sees them through
			// the teammate's forwarded stream.
		}
	}()
	defer func() {
		fromBridge.Close()
		for range responses {
		}
	}()
	call := func(msg string) (json.RawMessage, error) {
		if _, err := io.WriteString(toBridge, msg+"\n"); err != nil {
			return nil, err
		}
		for {
			select {
			case m, ok := <-responses:
				if !ok {
					return nil, fmt.Errorf("%w: the teammate's bridge closed", acp.ErrAgentExited)
				}
				return m, nil
			case <-ctx.Done():
				p.cancel(sid) // the lead went away: end the turn, then report it
				ctx = context.WithoutCancel(ctx)
			}
		}
	}
	sidJSON, _ := json.Marshal(sid)
	m, err := call(`{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":` + string(sidJSON) + `,"historyPolicy":"none"}}`)
	if err == nil {
		err = responseError(m)
	}
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.running == nil {
		p.running = map[string]*io.PipeWriter{}
	}
	p.running[sid] = toBridge
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.running[sid] == toBridge {
			delete(p.running, sid)
		}
		p.mu.Unlock()
	}()
	m, err = call(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":` + string(sidJSON) + `,"prompt":` + string(prompt) + `}}`)
	if err == nil {
		err = responseError(m)
	}
	if err != nil {
		return nil, err
	}
	env, _ := acp.Parse(m)
	return append(json.RawMessage(nil), env.Result.Bytes(m)...), nil
}

// cancel implements upstream.Options.Cancel: session/cancel from the host
// that runs the lead's prompt turn of sid, if one does.
func (p *leadPrompts) cancel(sid string) {
	p.mu.Lock()
	w := p.running[sid]
	p.mu.Unlock()
	if w != nil {
		sidJSON, _ := json.Marshal(sid)
		io.WriteString(w, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":`+string(sidJSON)+`}}`+"\n")
	}
}

// responseError returns the JSON-RPC error of response m, or nil.
func responseError(m json.RawMessage) error {
	env, err := acp.Parse(m)
	if err != nil {
		return err
	}
	if !env.Error.Present() {
		return nil
	}
	var e acp.Error
	if err := json.Unmarshal(env.Error.Bytes(m), &e); err != nil {
		return fmt.Errorf("%w: malformed error response", acp.ErrInternal)
	}
	return &e
}
