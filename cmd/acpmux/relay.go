package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/bridge/upstream"
	"github.com/acpmux/acpmux/bridge/web"
	"github.com/acpmux/acpmux/classify"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

// relayFlags are the flags of "acpmux run" shared with "acpmux demo".
type relayFlags struct {
	runFlags
	listen          string
	allowRemote     bool
	tokenFile       string
	state           string
	decisionTimeout time.Duration
	maxConnections  int
	maxOpen         int
	headless        bool
	autoApprove     string
	upstream        string
	upstreamToken   string
	name            string
	gate            gateFlags // gate_flags.go
	notify          stringList
	notifyAfter     time.Duration
	daily           dailyFlags // daily.go
	teammate        teammateFlags
}

func (f *relayFlags) register(fs *flag.FlagSet) {
	f.runFlags.register(fs)
	fs.StringVar(&f.listen, "listen", "", "serve the approvals page (/), ACP over WebSocket (/acp) and the decisions HTTP API (/v1) on ADDR (host:port, loopback unless --allow-remote); off when empty")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow --listen on a non-loopback address (logs a warning; the token is still required)")
	fs.StringVar(&f.tokenFile, "token-file", "", "bearer token file for --listen: read if it exists and is not empty, else a fresh 256-bit token is written there (mode 0600) (default $XDG_STATE_HOME/acpmux/token)")
	fs.StringVar(&f.state, "state", "", "decision store: a SQLite file, :memory: to keep nothing on disk, or a postgres:// URL shared by bridges on many machines (password from the URL, $PGPASSWORD or $PGPASSFILE) (default $XDG_STATE_HOME/acpmux/state.db)")
	fs.IntVar(&f.maxConnections, "max-connections", httpapi.DefaultMaxConnections, "at most N connections to --listen at once, WebSocket hosts included; at the cap the oldest connection that has not shown the token is closed, or a new one is refused")
	fs.IntVar(&f.maxOpen, "max-open-decisions", confirm.DefaultMaxOpen, "at most N open permission decisions across all sessions (besides 512 per session); a request beyond fails closed with its reject option")
	fs.DurationVar(&f.decisionTimeout, "decision-timeout", confirm.DefaultTimeout, "how long a permission request waits for an answer before it fails closed (at most 24h; 0 means the default)")
	fs.StringVar(&f.autoApprove, "auto-approve", "", "for unattended runs: allow_once answers every confirmation the policy leaves to ask with its offered allow_once option (never a plan-mode one-off, never an unoffered one-time choice), journalled as acpmux:auto-approve")
	fs.BoolVar(&f.headless, "headless", false, "the IDE on stdio (or a script) drives the agent but is never asked for confirmations: they wait for the page, the decisions API (--listen) or acpmux decisions, and time out closed")
	fs.StringVar(&f.upstream, "upstream", "", "run as a teammate of the lead acpmux at this /acp WebSocket URL (ws://HOST:PORT/acp): every confirmation is also offered there; needs --name (docs/teammates.md)")
	fs.StringVar(&f.upstreamToken, "upstream-token-file", "", "file with the lead's bearer token, for --upstream (default $XDG_STATE_HOME/acpmux/token)")
	fs.StringVar(&f.name, "name", "", "this bridge's name: at the lead for --upstream, and in a --state shared with other bridges (docs/inbox.md): 1-64 of A-Z a-z 0-9 . _ -")
	f.gate.register(fs)
	registerNotifyFlags(fs, &f.notify, &f.notifyAfter) // notify.go
	f.daily.register(fs)
	f.teammate.register(fs) // teammates.go
}

// relay is one agent behind the bridge with the broker, the store and the
// optional HTTP server wired in.
type relay struct {
	log      *slog.Logger
	stderr   io.Writer
	bridge   *bridge.Bridge
	agent    *bridge.Agent
	broker   *confirm.Broker
	store    stateStore
	up       *upstream.Client // --upstream, or nil
	server   *http.Server
	ln       net.Listener
	gate     *gateConfig
	metrics  *metrics     // metrics.go
	notifier *notifier    // notify.go; nil without --notify
	daily    *daily       // daily.go
	shared   store.Bridge // this bridge's registry row (shared.go); ID "" when the store is not shared
}

// startRelay starts the agent argv and everything around it. On error
// nothing is left running.
// validate checks the flags that need no I/O; an error is a usage error
// (exit status 2). A --decision-timeout of 0 means the default.
func (f *relayFlags) validate() error {
	if f.decisionTimeout == 0 {
		f.decisionTimeout = confirm.DefaultTimeout
	}
	if err := confirm.CheckTimeout(f.decisionTimeout); err != nil {
		if f.decisionTimeout > confirm.MaxTimeout {
			return fmt.Errorf("--decision-timeout %v: must be at most %v", f.decisionTimeout, confirm.MaxTimeout)
		}
		return fmt.Errorf("--decision-timeout %v: must not be negative (0 means the default, %v)", f.decisionTimeout, confirm.DefaultTimeout)
	}
	if f.listen != "" {
		if _, err := httpapi.CheckListenAddr(f.listen, f.allowRemote); err != nil {
			return err
		}
	}
	if f.maxLineBytes < 1024 {
		return fmt.Errorf("--max-line-bytes %d: must be at least 1024", f.maxLineBytes)
	}
	if f.maxConnections < 1 {
		return fmt.Errorf("--max-connections %d: must be at least 1", f.maxConnections)
	}
	if f.autoApprove != "" && f.autoApprove != "allow_once" {
		return fmt.Errorf("--auto-approve %q: the only value is allow_once", f.autoApprove)
	}
	if f.upstream != "" {
		if !strings.HasPrefix(f.upstream, "ws://") && !strings.HasPrefix(f.upstream, "wss://") {
			return fmt.Errorf("--upstream %q: want ws://HOST:PORT/acp", f.upstream)
		}
		if err := upstream.CheckName(f.name); err != nil {
			return fmt.Errorf("--name: %w", err)
		}
	} else if f.upstreamToken != "" {
		return errors.New("--upstream-token-file needs --upstream")
	} else if f.name != "" {
		if upstream.CheckName(f.name) != nil {
			return fmt.Errorf("--name %q: a bridge name is 1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit", f.name)
		}
	}
	if f.maxOpen < 1 {
		return fmt.Errorf("--max-open-decisions %d: must be at least 1", f.maxOpen)
	}
	if f.queueLen < 1 {
		return fmt.Errorf("--host-queue %d: must be at least 1", f.queueLen)
	}
	for _, u := range f.notify {
		if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("--notify %q: want an http:// or https:// URL", redactURL(u))
		}
	}
	if f.notifyAfter <= 0 {
		return fmt.Errorf("--notify-after %v: must be more than 0", f.notifyAfter)
	}
	return nil
}

// usageError marks an error in the flags (exit status 2).
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func startRelay(f *relayFlags, argv []string, stderr io.Writer, log *slog.Logger) (*relay, error) {
	if err := f.validate(); err != nil {
		return nil, usageError{err}
	}
	gate, err := f.gate.load(argv)
	if err != nil {
		return nil, usageError{err}
	}
	st, err := openState(f.state) // state.go
	if err != nil {
		return nil, err
	}
	if n := st.Recovered(); n > 0 {
		log.Info("cancelled decisions left open by a previous acpmux", "count", n, "reason", store.ReasonBridgeRestart)
	}
	r := &relay{log: log, stderr: stderr, store: st, gate: gate}
	r.shared = sharedBridge(st, f.name, argv) // shared.go
	if r.daily, err = openDaily(&f.daily, st, r.shared.ID, log); err != nil {
		st.Close()
		return nil, err
	}
	r.metrics = newMetrics(r.stats)
	var onOpen func(*confirm.Decision)
	if len(f.notify) > 0 {
		host, _ := os.Hostname()
		r.notifier = newNotifier(f.notify, f.notifyAfter, fmt.Sprintf("acpmux@%s (%s)", host, gate.agent), log)
		onOpen = r.notifier.opened
	}
	broker, err := confirm.NewBroker(gate.apply(confirm.Options{
		Store:          st,
		DefaultTimeout: f.decisionTimeout,
		MaxOpen:        f.maxOpen,
		AutoApprove:    f.autoApprove == "allow_once",
		Logger:         log,
		Classify:       r.metrics.classify(classifyCommand),
		Metrics:        r.metrics,
		OnOpen:         r.daily.onOpen(onOpen),
		BridgeID:       r.shared.ID,
	}))
	if err != nil {
		st.Close()
		return nil, err
	}
	r.broker = broker
	var extra []confirm.Presenter
	if f.listen != "" {
		if err := r.listen(f, broker); err != nil {
			st.Close()
			return nil, err
		}
		extra = append(extra, httpapi.Presenter{})
	}
	if f.upstream != "" {
		if err := r.teammate(f, broker); err != nil {
			r.closeServer()
			st.Close()
			return nil, err
		}
		extra = append(extra, r.up)
	}
	agent, err := bridge.StartAgent(bridge.AgentOptions{Argv: argv, Stderr: stderr, MaxLineBytes: f.maxLineBytes})
	if err != nil {
		r.closeServer()
		st.Close()
		return nil, err
	}
	log.Info("agent started", "argv", argv, "pid", agent.Pid(), "state", st.Path(), "procs", runtime.GOMAXPROCS(0))
	r.agent = agent
	r.bridge = bridge.New(agent, r.teammateOptions(f, r.daily.bridgeOptions(bridge.Options{
		MaxLineBytes:    f.maxLineBytes,
		GracePeriod:     f.grace,
		Logger:          log,
		Broker:          broker,
		Presenters:      extra,
		NoAgentPlanMode: gate.noAgentPlan,
		ReplayMaxBytes:  replayBudget(f),
	})))
	return r, nil
}

// replayBudget is the bridge's ReplayMaxBytes: the default budget when
// hosts can join later (--listen: a WebSocket host's session/attach),
// else none, so a relay that only its one host can ever reach keeps no
// copy of its sessions' updates (docs/protocol.md, "Replay log").
func replayBudget(f *relayFlags) int {
	if f.listen == "" {
		return -1
	}
	return 0
}

// teammate builds the --upstream client (started by run).
func (r *relay) teammate(f *relayFlags, broker *confirm.Broker) error {
	path := f.upstreamToken
	if path == "" {
		p, err := httpapi.DefaultTokenPath()
		if err != nil {
			return fmt.Errorf("--upstream-token-file: %w", err)
		}
		path = p
	}
	tok, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(tok)) == "" {
		return fmt.Errorf("--upstream-token-file: %v", errOr(err, "empty file"))
	}
	r.daily.secret(string(tok))
	lp := &leadPrompts{r: r, maxLineBytes: f.maxLineBytes} // teammates.go
	r.up = upstream.New(upstream.Options{URL: f.upstream, Token: strings.TrimSpace(string(tok)), Name: f.name,
		Broker: broker, Logger: r.log, MaxMessageBytes: int64(f.maxLineBytes), Prompt: lp.prompt, Cancel: lp.cancel})
	return nil
}

// listen starts the HTTP server of --listen.
func (r *relay) listen(f *relayFlags, broker *confirm.Broker) error {
	remote, err := httpapi.CheckListenAddr(f.listen, f.allowRemote)
	if err != nil {
		return err
	}
	tokenFile := f.tokenFile
	if tokenFile == "" {
		if tokenFile, err = httpapi.DefaultTokenPath(); err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
	}
	token, err := httpapi.LoadOrCreateToken(tokenFile)
	if err != nil {
		return fmt.Errorf("--token-file: %w", err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return listenError(f.listen, err) // hints.go
	}
	if remote {
		r.log.Warn("the decisions API listens on a non-loopback address; anyone who can reach it and has the token can answer permission requests", "addr", ln.Addr().String())
	}
	r.ln = httpapi.LimitListener(ln, f.maxConnections, r.log)
	routes := map[string]http.Handler{
		"GET /acp": http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r.bridge.ServeWebSocket(w, req, f.queueLen)
		}),
		"GET /metrics": r.metrics.handler(),
		"GET /{$}":     web.Index(),
		"GET /static/": web.Static(),
	}
	people, _ := r.store.(store.People) // docs/tokens.md
	r.daily.secret(token)
	if r.daily.feed != nil {
		routes["GET /v1/events"] = httpapi.Events(r.daily.feed, httpapi.EventsOptions{Logger: r.log}) // events.go
	}
	r.server = httpapi.NewServer(httpapi.New(broker, httpapi.Options{Addr: ln.Addr().String(), Token: token, Version: version,
		Logger: r.log, Routes: routes, People: people}), r.log)
	base := "http://" + ln.Addr().String()
	if r.notifier != nil {
		r.notifier.page = base + "/"
	}
	r.log.Info("decisions API listening", "url", base, "acp", "ws://"+ln.Addr().String()+"/acp", "token_file", tokenFile)
	fmt.Fprintf(r.stderr, "acpmux: approvals page: %s/?token=%s\n", base, token)
	return nil
}

// run relays until the agent exits or the primary host leaves, then shuts
// everything down and returns the agent's exit status.
func (r *relay) run(ctx context.Context) int {
	defer r.gate.watchReload(r.broker, r.log)()
	r.daily.start()
	bctx, stopBroker := context.WithCancel(context.Background())
	brokerDone := make(chan struct{})
	go func() { defer close(brokerDone); r.broker.Run(bctx) }()
	sharedDone := r.runShared(bctx) // shared.go
	upDone := make(chan struct{})
	if r.up != nil {
		go func() { defer close(upDone); r.up.Run(bctx) }()
	} else {
		close(upDone)
	}
	serverDone := make(chan struct{})
	if r.server != nil {
		go func() {
			defer close(serverDone)
			if err := r.server.Serve(r.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				r.log.Error("decisions API stopped", "err", err)
			}
		}()
	} else {
		close(serverDone)
	}
	if err := r.bridge.Run(ctx); err != nil {
		r.log.Debug("the bridge stopped the agent", "err", err)
	}
	code := r.agent.ExitCode()
	r.daily.sessionsEnded(r.broker, code)
	if r.notifier != nil {
		r.notifier.close()
	}
	r.closeServer()
	<-serverDone
	stopBroker()
	<-brokerDone
	<-sharedDone
	<-upDone
	r.daily.close()
	if err := r.store.Close(); err != nil {
		r.log.Warn("close decision store", "err", err)
	}
	return code
}

// stats reads the bridge's counters for the metrics; the HTTP server starts
// only after the bridge exists.
func (r *relay) stats() (bridge.Stats, bool) {
	if r.bridge == nil {
		return bridge.Stats{}, false
	}
	return r.bridge.Stats(), true
}

func (r *relay) closeServer() {
	if r.server == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r.server.Shutdown(sctx)
}

// classifyCommand adapts classify.Command to confirm.Options.Classify.
func classifyCommand(cmd string) confirm.Classification {
	v := classify.Command(cmd)
	reasons := make([]string, 0, len(v.Reasons))
	for _, r := range v.Reasons {
		reasons = append(reasons, r.String())
	}
	return confirm.Classification{Class: v.Class.String(), Reasons: reasons, Diverges: v.Diverges}
}
