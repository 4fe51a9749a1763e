package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
)

// Default reconnect backoff of a Client: the first wait and the cap.
const (
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 15 * time.Second
)

// Options configure a [Client].
type Options struct {
	// URL is the lead's /acp WebSocket (ws://HOST:PORT/acp).
	URL string
	// Token is the lead's bearer token, sent in the Authorization header
	// of the upgrade, as acpmux attach does (docs/web.md).
	Token string
	// Name is this teammate's name ([CheckName]).
	Name string
	// Broker is the teammate's own broker: every answer of the lead goes
	// through its Answer as host "upstream:NAME".
	Broker *confirm.Broker
	// Logger receives the client's logs; nil means slog.Default().
	Logger *slog.Logger
	// MaxMessageBytes bounds one message from the lead (0: 64 MiB).
	MaxMessageBytes int64
	// MinBackoff and MaxBackoff bound the reconnect wait, which doubles
	// after each failed attempt, with jitter (0: the defaults).
	MinBackoff, MaxBackoff time.Duration
	// Prompt runs a prompt turn the lead asked for (MethodPrompt, sent by
	// a lead started with --allow-teammate-prompts) in session sessionID
	// and returns the agent's session/prompt result; ctx ends when the
	// connection to the lead does. Nil: such requests are refused.
	Prompt func(ctx context.Context, sessionID string, prompt json.RawMessage) (json.RawMessage, error)
	// Cancel cancels the prompt turn of sessionID the lead started
	// (MethodCancel). Nil: ignored.
	Cancel func(sessionID string)
}

// updateQueueLen bounds the session/update notifications waiting to be
// forwarded to the lead; more are dropped (the lead's view then misses
// them; the teammate's own hosts do not).
const updateQueueLen = 4096

// Client is a teammate's connection to its lead and a [confirm.Presenter]
// of the teammate's broker: each decision presented to it is offered to
// the lead (MethodAsk), again after every reconnect while it is open. The
// lead's answer is validated by the teammate's broker ([confirm.Broker.Answer]
// as host HostID): an optionId that was not offered, an answer for another
// snapshot or a late answer never reaches the agent. Losing the lead never
// answers anything: the copy stays open for the lead, local hosts can
// still answer, and the decision times out closed. Safe for concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	pending map[string]*confirm.Decision // decision id → decision offered to the lead
	conn    *websocket.Conn              // current connection after hello, or nil
	calls   map[string]string            // ask request id → decision id, on conn
	nextID  int64

	updates chan []byte  // MethodUpdate notifications for the current connection
	dropped atomic.Int64 // updates dropped: not connected, or the queue full
}

// New returns a client with opts; it connects when Run is called.
func New(opts Options) *Client {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 64 << 20
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Client{opts: opts, log: log, pending: map[string]*confirm.Decision{}, calls: map[string]string{},
		updates: make(chan []byte, updateQueueLen)}
}

// HostID returns "upstream:NAME", the host id of the lead's answers in the
// teammate's journal.
func (c *Client) HostID() string { return "upstream:" + c.opts.Name }

// Present offers d to the lead now if connected, else at the next
// connection. It never fails: a lead that is away may come back before
// d times out.
func (c *Client) Present(d *confirm.Decision) error {
	c.mu.Lock()
	c.pending[d.ID()] = d
	conn := c.conn
	c.mu.Unlock()
	if conn != nil {
		go c.ask(conn, d)
	}
	return nil
}

// Withdraw tells the lead that d closed without its answer
// (MethodWithdraw), so the lead withdraws its hosts' copies.
func (c *Client) Withdraw(d *confirm.Decision, _ confirm.Resolution) {
	c.mu.Lock()
	_, had := c.pending[d.ID()]
	delete(c.pending, d.ID())
	conn := c.conn
	c.mu.Unlock()
	if had && conn != nil {
		p, _ := json.Marshal(Withdraw{Teammate: c.opts.Name, SessionID: d.SessionID(), DecisionID: d.ID()})
		go c.write(conn, notification(MethodWithdraw, p))
	}
}

// Won forgets d: the lead's answer closed it, and the lead's decision is
// closed already.
func (c *Client) Won(d *confirm.Decision, _ confirm.Resolution) {
	c.mu.Lock()
	delete(c.pending, d.ID())
	c.mu.Unlock()
}

// Update forwards the update member of one session/update of session
// sessionID of the teammate's agent to the lead (MethodUpdate), without
// blocking: while the lead is not connected, or when updateQueueLen are
// waiting, it is dropped. Its bytes are sent as they are, copied into the
// notification before Update returns (update may be a lent line). It is
// the bridge's Options.Watch of a teammate.
func (c *Client) Update(sessionID string, update []byte) {
	c.mu.Lock()
	connected := c.conn != nil
	c.mu.Unlock()
	if !connected {
		c.dropped.Add(1)
		return
	}
	select {
	case c.updates <- notification(MethodUpdate, UpdateParams(c.opts.Name, sessionID, update)):
	default:
		if c.dropped.Add(1)%1000 == 1 {
			c.log.Warn("upstream: the lead reads the transcript too slowly; session/update notifications dropped", "teammate", c.opts.Name, "dropped", c.dropped.Load())
		}
	}
}

// forward writes the queued updates on conn, in order, until ctx ends.
func (c *Client) forward(ctx context.Context, conn *websocket.Conn) {
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-c.updates:
			if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
				return
			}
		}
	}
}

// serve runs the lead's MethodPrompt request id and queues its response.
func (c *Client) serve(ctx context.Context, id, params []byte) {
	var p Prompt
	_, err := acp.DecodeObject(params, []string{"sessionId", "prompt"}, true)
	if err == nil {
		err = json.Unmarshal(params, &p)
	}
	var res json.RawMessage
	if err == nil {
		c.log.Info("upstream: the lead prompts a session", "teammate", c.opts.Name, "session", p.SessionID)
		res, err = c.opts.Prompt(ctx, p.SessionID, p.Prompt)
	}
	msg := []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + string(res) + `}`)
	if err != nil {
		e, _ := json.Marshal(acp.AsError(err))
		msg = []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + string(e) + `}`)
	}
	// Behind the turn's updates, in the same queue: the lead's host
	// gets the result after the transcript it ends.
	select {
	case c.updates <- msg:
	case <-ctx.Done():
	}
}

// Run connects to the lead and serves the connection, reconnecting with
// exponential backoff and jitter, until ctx ends.
func (c *Client) Run(ctx context.Context) {
	wait := c.opts.MinBackoff
	for ctx.Err() == nil {
		start := time.Now()
		err := c.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > c.opts.MaxBackoff {
			wait = c.opts.MinBackoff // it was up for a while: start over
		}
		d := wait/2 + rand.N(wait/2+1) // jitter: half to the full wait
		c.log.Warn("upstream: not connected to the lead; retrying", "url", c.opts.URL, "teammate", c.opts.Name, "err", err, "in", d)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return
		}
		wait = min(wait*2, c.opts.MaxBackoff)
	}
}

// session dials, says hello, offers every pending decision and reads the
// lead's messages until the connection ends.
func (c *Client) session(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, c.opts.URL, &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + c.opts.Token}},
		Subprotocols: []string{"acp"},
	})
	if err != nil {
		if resp != nil {
			return fmt.Errorf("dial: %s", resp.Status)
		}
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(c.opts.MaxMessageBytes)
	// Reads end with the connection, not with ctx (coder/websocket drops
	// the connection when a read's context ends).
	rctx, rcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer rcancel()
	go func() {
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusGoingAway, "teammate stopping")
		case <-rctx.Done():
		}
	}()
	hello, _ := json.Marshal(Hello{Teammate: c.opts.Name})
	if err := conn.Write(rctx, websocket.MessageText, request(`"hello"`, MethodHello, hello)); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	var served sync.WaitGroup
	defer served.Wait()
	defer rcancel() // before the Wait: the forwarder and prompts end with the connection
	for {
		_, data, err := conn.Read(rctx)
		if err != nil {
			c.lost(conn)
			return err
		}
		env, perr := acp.Parse(data)
		if perr != nil {
			continue
		}
		switch env.Kind {
		case acp.KindResponse:
			if string(env.ID.Bytes(data)) == `"hello"` {
				if env.Error.Present() {
					c.log.Error("upstream: the lead refused this teammate's name", "teammate", c.opts.Name, "error", string(env.Error.Bytes(data)))
					conn.Close(websocket.StatusNormalClosure, "")
					return fmt.Errorf("hello refused: %s", env.Error.Bytes(data))
				}
				c.connected(conn)
				served.Go(func() { c.forward(rctx, conn) })
				continue
			}
			c.answered(data, env)
		case acp.KindNotification:
			if env.Method == MethodCancel && c.opts.Cancel != nil {
				var p Cancel
				if json.Unmarshal(env.Params.Bytes(data), &p) == nil && p.SessionID != "" {
					c.opts.Cancel(p.SessionID)
				}
			}
		case acp.KindRequest:
			if env.Method == MethodPrompt && c.opts.Prompt != nil {
				id, params := append([]byte(nil), env.ID.Bytes(data)...), append([]byte(nil), env.Params.Bytes(data)...)
				served.Go(func() { c.serve(rctx, id, params) })
				continue
			}
			// Other requests of the lead's hosts are not ours to serve.
			e, _ := json.Marshal(acp.AsError(fmt.Errorf("%w: a teammate connection serves no requests", acp.ErrMethodNotFound)))
			go c.write(conn, []byte(`{"jsonrpc":"2.0","id":`+string(env.ID.Bytes(data))+`,"error":`+string(e)+`}`))
		}
	}
}

// connected makes conn the current connection and offers every pending
// decision on it.
func (c *Client) connected(conn *websocket.Conn) {
	c.mu.Lock()
	c.conn = conn
	c.calls = map[string]string{}
	ds := make([]*confirm.Decision, 0, len(c.pending))
	for _, d := range c.pending {
		ds = append(ds, d)
	}
	c.mu.Unlock()
	c.log.Info("upstream: connected to the lead", "url", c.opts.URL, "teammate", c.opts.Name, "pending", len(ds))
	for _, d := range ds {
		go c.ask(conn, d)
	}
}

// lost forgets conn; the pending decisions stay open and are offered
// again on the next connection.
func (c *Client) lost(conn *websocket.Conn) {
	c.mu.Lock()
	if c.conn == conn {
		c.conn = nil
		c.calls = map[string]string{}
	}
	c.mu.Unlock()
}

// ask sends the MethodAsk request of d on conn.
func (c *Client) ask(conn *websocket.Conn, d *confirm.Decision) {
	left := time.Until(d.Deadline()).Milliseconds()
	if left < 1 {
		return
	}
	p, err := json.Marshal(AskOf(c.opts.Name, d, left))
	if err != nil {
		return
	}
	c.mu.Lock()
	if c.conn != conn || c.pending[d.ID()] == nil {
		c.mu.Unlock()
		return
	}
	c.nextID++
	id := strconv.Quote("a" + strconv.FormatInt(c.nextID, 10))
	c.calls[id] = d.ID()
	c.mu.Unlock()
	c.write(conn, request(id, MethodAsk, p))
}

// answered hands the lead's response to an ask to the teammate's broker.
func (c *Client) answered(data []byte, env acp.Envelope) {
	id := string(env.ID.Bytes(data))
	c.mu.Lock()
	did, ok := c.calls[id]
	delete(c.calls, id)
	d := c.pending[did]
	c.mu.Unlock()
	if !ok || d == nil {
		return // withdrawn meanwhile, or a response to nothing we asked
	}
	host := c.HostID()
	if env.Error.Present() {
		var e acp.Error
		json.Unmarshal(env.Error.Bytes(data), &e)
		if e.Code == acp.ErrRequestCancelled.Code {
			return
		}
		c.abstain(d, "the lead refused the ask: "+string(env.Error.Bytes(data)))
		return
	}
	var r AskResult
	raw := env.Result.Bytes(data)
	if _, err := acp.DecodeObject(raw, []string{"outcome", "displayedTextSha256"}, true); err != nil || acp.DuplicateKey(raw) != "" || json.Unmarshal(raw, &r) != nil {
		c.abstain(d, "malformed answer from the lead")
		return
	}
	switch {
	case r.Outcome.Outcome == acp.OutcomeCancelled:
		c.abstain(d, "the lead's decision closed without an answer")
	case r.Outcome.Outcome != acp.OutcomeSelected || r.Outcome.OptionID == "":
		c.abstain(d, "malformed answer from the lead")
	case r.DisplayedTextSHA256 != d.Snapshot().DisplayedTextSHA256:
		c.abstain(d, "the lead answered another snapshot (displayedTextSha256 "+r.DisplayedTextSHA256+")")
	default:
		_, _, err := c.opts.Broker.Answer(context.Background(), d.SessionID(), d.ID(), host, confirm.Answer{OptionID: r.Outcome.OptionID})
		if err != nil {
			c.log.Warn("upstream: the lead's answer was not accepted", "decision", d.ID(), "optionId", r.Outcome.OptionID, "err", err)
			if errors.Is(err, confirm.ErrInvalidAnswer) {
				c.abstain(d, "invalid answer from the lead")
			}
		}
	}
}

// abstain forgets d and makes the lead's copy abstain in the broker, then
// logs it (once logged, the abstention is in d's journal).
func (c *Client) abstain(d *confirm.Decision, reason string) {
	c.mu.Lock()
	delete(c.pending, d.ID())
	c.mu.Unlock()
	c.opts.Broker.Abstain(d.ID(), c.HostID(), reason)
	c.log.Warn("upstream: no answer from the lead", "decision", d.ID(), "reason", reason)
}

func (c *Client) write(conn *websocket.Conn, msg []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
		c.log.Debug("upstream: write failed", "err", err)
	}
}

func request(id, method string, params []byte) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + string(params) + `}`)
}

func notification(method string, params []byte) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"` + method + `","params":` + string(params) + `}`)
}
