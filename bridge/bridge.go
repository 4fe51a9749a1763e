package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
)

// DefaultGracePeriod is how long the bridge waits for the agent to exit
// after closing its stdin before it signals the process group.
const DefaultGracePeriod = 3 * time.Second

// Options configure a Bridge. The zero value works.
type Options struct {
	// MaxLineBytes caps one message from a host (DefaultMaxLineBytes when 0).
	MaxLineBytes int
	// GracePeriod is the wait between closing the agent's stdin, SIGTERM
	// and SIGKILL on shutdown (DefaultGracePeriod when 0), and, once the
	// agent has exited, how long a host may take nothing of what is
	// queued for it before it is disconnected (watchStuckHosts).
	GracePeriod time.Duration
	// Watch, when set, gets the update member of every session/update
	// notification of the agent, with its session id, on the agent's read
	// loop: it must not block, and update is valid only during the call
	// (it may be lent from a read block that is reused), so Watch copies
	// what it keeps (a teammate's upstream client forwards them to its
	// lead, docs/teammates.md).
	Watch func(sessionID string, update []byte)
	// AllowTeammatePrompts lets this bridge's hosts prompt (and cancel) a
	// teammate's session "teammate:NAME/SESSION"; off, they are refused
	// and the session is read-only (--allow-teammate-prompts,
	// docs/teammates.md).
	AllowTeammatePrompts bool
	// ReplayMaxBytes bounds each session's replay log, in bytes
	// (DefaultReplayMaxBytes when 0). Negative keeps no replay log: for a
	// bridge no host can join after it started (acpmux run without
	// --listen), where a session/attach with historyPolicy "full" then
	// gets the still-open permission requests and live traffic only
	// (docs/protocol.md, "Replay log").
	ReplayMaxBytes int
	// Logger receives the bridge's logs; nil discards them. Never stdout.
	Logger *slog.Logger
	// Broker decides session/request_permission requests: each becomes a
	// decision presented to every host of the session (the owner first)
	// and to Presenters, and the first valid answer wins
	// (docs/decisions.md). [New] hands the bridge's sessions to it
	// ([confirm.Broker.UseSessions]). Nil forwards each request to the
	// session's owning host, exactly once.
	Broker *confirm.Broker
	// Presenters are shown every decision besides the session's hosts
	// (the HTTP API's [httpapi.Presenter]); unused without Broker.
	Presenters []confirm.Presenter
	// NoAgentPlanMode keeps the agent's own mode alone when the gate enters
	// plan mode (--no-agent-plan-mode); by default the bridge then sets the
	// agent's plan mode, if it offers one (docs/plan-mode.md).
	NoAgentPlanMode bool
	// OnSession is called with the id and working directory of each
	// session a host created, loaded or resumed, from the agent reader
	// after the bridge's locks are released; it must not block. Nil does
	// nothing.
	OnSession func(sessionID, cwd string)
	// Tap, when not nil, is given every message the bridge reads or writes
	// (--record, docs/record.md); see [Tap].
	Tap Tap
}

// Bridge relays one agent to many hosts. Create it with New, add hosts with
// AddHost, then call Run.
type Bridge struct {
	opts   Options
	log    *slog.Logger
	agent  *Agent
	toAgt  chan []byte     // agent writer queue
	broker *confirm.Broker // opts.Broker
	epoch  string          // distinguishes this bridge's agent keys in the decision store

	permMu sync.Mutex        // guards asked
	turns  requesters        // who prompted each session's current turn (host_person.go)
	asked  map[string]string // agent request key (occurrence) → decision id, while the broker decides it

	hostWG sync.WaitGroup // host reader and writer goroutines
	permWG sync.WaitGroup // permission goroutines
	nextID atomic.Int64   // bridge ids of host → agent requests
	seq    atomic.Int64   // occurrence numbers of agent requests
	// pending holds notifications the agent reader has not handed to
	// their hosts yet (agent reader goroutine only).
	pending []pendingBatch
	// line is the block of the agent line being routed, lent by the
	// agent's conn until its next read (nil: the line is the bridge's
	// own); only the agent reader uses it. See lineBlock.
	line *lineBlock
	// lineAt is where the lent line starts in line when a "\n" follows it
	// there, else -1 (sharedReader.lentAt): such lines are joined in the
	// batches of NDJSON hosts (hostBatch.addLine).
	lineAt int
	// agentParser parses agent messages (only the agent reader uses it).
	agentParser acp.Parser
	// run is the agent reader's run of plain session/update lines not
	// routed yet (route_agent.go, agentRun); plainRuns tells whether the
	// reader may gather them (no Watch), runReplay whether sessions keep
	// a replay log (the run keeps each line's parts for it).
	run       agentRun
	plainRuns bool
	runReplay bool
	runEnv    acp.Envelope // extendRun's envelope, reused line after line
	runs      int          // runs routed (tests)
	// readMsgs and readBytes count agent messages the reader has not
	// added to stats yet (reader only; flushPending adds them).
	readMsgs, readBytes int64
	// reads counts the agent reader's reads; inRead is set while it waits
	// for input (awaitStdout tells a stuck pipe from a busy reader).
	reads  atomic.Int64
	inRead atomic.Bool
	// reservedLogged and metaLogged record what the agent reader already
	// logged of the agent's use of acpmux's namespace (reader only).
	reservedLogged map[string]bool
	metaLogged     bool
	// unknownLogged and unknownRefused rate-limit the log of permission
	// requests for unknown sessions (reader only).
	unknownLogged  time.Time
	unknownRefused int

	// primaryEOF is closed when the primary host has sent everything it
	// will send (its read side ended cleanly): a half close, after which
	// it still gets what the agent writes until the agent exits.
	primaryEOF     chan struct{}
	primaryEOFOnce sync.Once

	mu      sync.Mutex // guards the fields below
	hosts   []*Host
	primary *Host
	// agentCalls holds the ids (acp.IDKey) of agent requests still waiting
	// for a response, each with its occurrence key (a sequence number and
	// the id): an agent may reuse an id only once it was answered.
	agentCalls map[string]string
	calls      map[string]*call // bridge id key → host request in flight
	own        map[string]bool  // bridge id keys of acpmux's own requests to the agent (agent_plan.go)
	sessions   map[string]*session
	teammates  map[string]*Host // teammate name → its connection (docs/teammates.md)
	init       initState
	agentGone  bool
	stopping   bool
	// callsDrained, when not nil, is closed once no request of the
	// primary host waits for the agent's response (drain.go).
	callsDrained chan struct{}
	// agentFailure is why the bridge stopped the agent, if it did.
	agentFailure error

	stats struct {
		nonJSON, dropped      atomic.Int64
		agentMsgs, agentBytes atomic.Int64 // read from the agent
		hostMsgs, hostBytes   atomic.Int64 // read from hosts
		tooSlow               atomic.Int64 // hosts disconnected with ErrHostTooSlow
	}
}

// call is a host → agent request waiting for the agent's response.
type call struct {
	host    *Host
	origID  []byte // the host's id bytes, restored on the response
	hostKey string
	method  string
	session string // session/load, session/resume, session/prompt: params.sessionId
	cwd     string // session/new, session/load: params.cwd
}

// session is what the bridge knows of one ACP session.
type session struct {
	id     string
	cwd    string
	owner  *Host // serves fs/* and terminal/*; created or loaded the session
	hosts  []*Host
	turn   *Host // host whose session/prompt is in flight, nil between turns
	replay *replayLog
	modes  agentModes // agent_plan.go

	// teammate names the teammate whose transcript this session shows
	// (teammate_watch.go), or "".
	teammate string
}

// initState caches the agent's initialize result for later hosts.
type initState struct {
	pending bool
	result  []byte       // raw result of the first successful initialize
	waiters []initWaiter // hosts whose initialize waits for the first one
}

type initWaiter struct {
	host *Host
	id   []byte
}

// New returns a bridge for agent and hands its sessions to opts.Broker, if
// any. It starts nothing.
func New(agent *Agent, opts Options) *Bridge {
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = DefaultGracePeriod
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var e [8]byte
	rand.Read(e[:])
	b := &Bridge{
		opts: opts, log: log, agent: agent, broker: opts.Broker, epoch: hex.EncodeToString(e[:]),
		toAgt:      make(chan []byte, 1024),
		asked:      map[string]string{},
		calls:      map[string]*call{},
		own:        map[string]bool{},
		agentCalls: map[string]string{},
		primaryEOF: make(chan struct{}),
		sessions:   map[string]*session{},
		plainRuns:  opts.Watch == nil,
		runReplay:  opts.ReplayMaxBytes >= 0,
	}
	if b.broker != nil {
		b.broker.UseSessions(b)
	}
	if opts.Tap != nil {
		agent.conn = newTapConn(agent.conn, opts.Tap, AgentTapID, FromAgent, ToAgent)
	}
	return b
}

// ErrClosed is returned by AddHost once the bridge is shutting down.
var ErrClosed = errors.New("acpmux is shutting down: the agent has exited")

// AddHost connects h: its reader and writer goroutines start at once and
// Run waits for them. The first host added is the primary host: it owns
// sessions whose owner is unknown, and its end ends the bridge. After the
// agent has exited it returns ErrClosed and starts nothing.
func (b *Bridge) AddHost(h *Host) error {
	b.mu.Lock()
	if b.stopping || b.agentGone {
		b.mu.Unlock()
		return ErrClosed
	}
	if b.primary == nil {
		b.primary = h
	}
	if b.opts.Tap != nil {
		h.conn = newTapConn(h.conn, b.opts.Tap, h.ID, FromHost, ToHost)
	}
	h.onDropped = func() { b.hostDropped(h) }
	b.hosts = append(b.hosts[:len(b.hosts):len(b.hosts)], h)
	b.hostWG.Add(2)
	b.mu.Unlock()
	go func() { defer b.hostWG.Done(); h.writeLoop() }()
	go func() { defer b.hostWG.Done(); b.readHost(h) }()
	b.log.Info("host attached", "host", h.ID)
	return nil
}

// Run relays until the agent exits, the primary host leaves, or ctx is
// done. Every pending host request is answered, every host's queue flushed,
// and every goroutine it started has exited when it returns; the agent's
// exit status is then [Agent.ExitCode]. It returns nil, or why the bridge
// stopped the agent itself (it broke the protocol, such as a line over the
// size limit on its stdout).
func (b *Bridge) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); b.agent.wait() }()
	go func() { defer wg.Done(); b.writeAgent() }()
	readDone := make(chan struct{})
	go func() { defer wg.Done(); defer close(readDone); b.readAgent() }()

	select {
	case <-readDone:
		// The agent closed its stdout: it is dead to every host at once,
		// even if the process lingers.
		b.agentExited()
		select {
		case <-b.agent.Exited():
		case <-time.After(b.opts.GracePeriod):
			b.log.Warn("agent closed stdout but is still running; stopping its process group", "pid", b.agent.Pid())
			b.agent.terminate(b.opts.GracePeriod)
		}
	case <-b.agent.Exited():
		// The process is gone; the wait below ends a descendant's hold on
		// its stdout.
	case <-b.primaryEOF:
		// As with a direct pipe, the agent sees EOF, but only once it has
		// answered the IDE's requests (or the grace period ended); the IDE
		// gets every answer until it exits.
		b.stopDecisions("the IDE closed the connection; acpmux is stopping")
		b.awaitPrimaryCalls(ctx, readDone)
		b.log.Debug("host closed its input; closing the agent's stdin", "host", b.primaryID(), "grace", b.opts.GracePeriod)
		b.closeAgentInput()
		b.agent.Stop(ctx, b.opts.GracePeriod)
	case <-b.primaryDone():
		b.log.Debug("host closed the connection; stopping agent", "host", b.primaryID(), "grace", b.opts.GracePeriod)
		b.stopDecisions("the IDE closed the connection; acpmux is stopping")
		b.closeAgentInput()
		b.agent.Stop(ctx, b.opts.GracePeriod)
	case <-ctx.Done():
		b.log.Info("stopping agent", "cause", context.Cause(ctx))
		b.stopDecisions("acpmux is stopping: " + context.Cause(ctx).Error())
		b.closeAgentInput()
		b.agent.Stop(ctx, b.opts.GracePeriod)
	}
	<-b.agent.Exited()
	b.agent.Signal(syscall.SIGKILL) // anything the agent left in its process group
	stopWatch := b.watchStuckHosts()
	b.awaitStdout(readDone)
	b.agentExited()
	b.permWG.Wait()
	wg.Wait()
	b.closeHosts()
	b.hostWG.Wait()
	stopWatch()
	b.log.Info("agent exited", "status", b.agent.ExitCode(), "signal", b.agent.exitSignal(), "non_json_lines", b.stats.nonJSON.Load(), "dropped", b.stats.dropped.Load())
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agentFailure
}

// errHostStuck is why a host that took nothing of what was queued for it
// while the bridge stopped was disconnected (watchStuckHosts).
var errHostStuck = errors.New("host took nothing of what was queued for it while acpmux was stopping")

// progresser is a Conn that counts the bytes it has written to its peer,
// a write in progress included (ndjsonConn).
type progresser interface{ wroteBytes() int64 }

// watchStuckHosts watches the hosts, once the agent has exited, until
// stop is called: a host with messages queued that takes none of them for
// the grace period (an IDE that stopped reading acpmux's stdout) is
// disconnected, so that the agent reader and the host's writer, which
// wait for it, end and acpmux exits. What was queued for it is lost; a
// host that takes some in that time is waited for: a message written, or
// for a progresser, any byte of one (a 64 MiB line takes a while).
func (b *Bridge) watchStuckHosts() (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		type seen struct {
			msgs, bytes, wrote int64
			since              time.Time // when they last changed
		}
		last := map[*Host]seen{}
		tick := time.NewTicker(b.opts.GracePeriod/4 + time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				b.mu.Lock()
				hosts := append([]*Host(nil), b.hosts...)
				b.mu.Unlock()
				for _, h := range hosts {
					if h.Err() != nil {
						continue // gone already
					}
					m, q, w := h.msgs.Load(), h.queued.Load(), int64(0)
					if p, ok := h.conn.(progresser); ok {
						w = p.wroteBytes()
					}
					if s, ok := last[h]; ok && m > 0 && m == s.msgs && q == s.bytes && w == s.wrote {
						if now.Sub(s.since) > b.opts.GracePeriod {
							b.log.Warn("host took nothing of what was queued for it while acpmux was stopping; disconnecting it",
								"host", h.ID, "queued", m, "grace", b.opts.GracePeriod)
							h.disconnect(errHostStuck)
						}
						continue
					}
					last[h] = seen{m, q, w, now}
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// awaitStdout waits, once the agent process has exited, until its stdout
// is read to the end. A descendant outside the process group may hold the
// pipe open: when a read has waited for more than the grace period, the
// pipe is closed. A long message still being processed is not cut short.
func (b *Bridge) awaitStdout(readDone <-chan struct{}) {
	tick := time.NewTicker(b.opts.GracePeriod/4 + time.Millisecond)
	defer tick.Stop()
	last, since := b.reads.Load(), time.Now()
	for {
		select {
		case <-readDone:
			return
		case now := <-tick.C:
			if n := b.reads.Load(); n != last || !b.inRead.Load() {
				last, since = n, now
				continue
			}
			if now.Sub(since) > b.opts.GracePeriod {
				b.log.Warn("agent exited but a process it started holds its stdout open; closing it")
				b.agent.closeStdout()
				<-readDone
				return
			}
		}
	}
}

func (b *Bridge) primaryDone() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.primary == nil {
		return nil
	}
	return b.primary.gone
}

// isPrimary reports whether h is the primary host.
func (b *Bridge) isPrimary(h *Host) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.primary == h
}

func (b *Bridge) primaryID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.primary == nil {
		return ""
	}
	return b.primary.ID
}

// closeHosts flushes every host's queue and closes its connection.
func (b *Bridge) closeHosts() {
	b.mu.Lock()
	b.stopping = true
	hosts := append([]*Host(nil), b.hosts...)
	b.mu.Unlock()
	for _, h := range hosts {
		h.finish()
	}
	for _, h := range hosts {
		<-h.wdone
		cause := errBridgeClosed
		if b.isPrimary(h) && b.primaryClosedInput() {
			cause = errHostClosed // it left first: its EOF is why it goes ("host left")
		}
		h.disconnect(cause)
	}
}

// primaryClosedInput reports whether the primary host has closed its
// input (the IDE's EOF: primaryEOF is closed).
func (b *Bridge) primaryClosedInput() bool {
	select {
	case <-b.primaryEOF:
		return true
	default:
		return false
	}
}

var errBridgeClosed = errors.New("bridge closed")

// writeAgent drains the agent queue in batches until the agent exits. A
// nil message (closeAgentInput) closes the agent's stdin after everything
// queued before it was written.
func (b *Bridge) writeAgent() {
	batch := make([][]byte, 0, 64)
	for {
		var m []byte
		select {
		case m = <-b.toAgt:
		case <-b.agent.Exited():
			return
		}
		batch = append(batch[:0], m)
		for more := m != nil; more && len(batch) < 256; {
			select {
			case m = <-b.toAgt:
				batch = append(batch, m)
				more = m != nil
			default:
				more = false
			}
		}
		closing := batch[len(batch)-1] == nil
		if closing {
			batch = batch[:len(batch)-1]
		}
		if err := b.agent.conn.WriteMessages(batch); err != nil {
			b.log.Debug("write to agent failed", "err", err)
			closing = true
		}
		clear(batch)
		if closing {
			b.agent.CloseStdin()
			<-b.agent.Exited()
			return
		}
	}
}

// closeAgentInput closes the agent's stdin once every message queued so far
// has been written to it.
func (b *Bridge) closeAgentInput() {
	select {
	case b.toAgt <- nil:
	case <-b.agent.Exited():
	case <-time.After(b.opts.GracePeriod):
		b.agent.CloseStdin() // the agent does not read its stdin
	}
}

// toAgent queues msg for the agent; it reports false once the agent is gone.
func (b *Bridge) toAgent(msg []byte) bool {
	b.mu.Lock()
	gone := b.agentGone
	b.mu.Unlock()
	if gone {
		return false
	}
	select {
	case b.toAgt <- msg:
		return true
	case <-b.agent.Exited():
		return false
	}
}

// mintBridgeID returns a fresh id for a host → agent request and its key.
func (b *Bridge) mintBridgeID() ([]byte, string) {
	n := b.nextID.Add(1)
	return strconv.AppendInt(nil, n, 10), "n" + strconv.FormatInt(n, 10)
}
