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
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/bridge/web"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
)

func init() {
	register(command{name: "inbox", summary: "one approvals page and decisions API for every bridge sharing a --state", run: inboxMain,
		flags: func() *flag.FlagSet { fs, _ := inboxFlagSet(); return fs }})
}

const inboxUsage = `Usage: acpmux inbox --listen ADDR [--state FILE|postgres://...] [flags]

Serves the approvals page (/) and the decisions HTTP API (/v1) for every
bridge (acpmux run) that shares the decision store --state, with no agent
of its own: the one link to keep open (docs/inbox.md). It also closes, as
owner_lost, the open decisions of bridges that stopped heartbeating.

Flags:
`

// inboxFlags are the flags of "acpmux inbox".
type inboxFlags struct {
	runFlags       // the log flags; the relay's others are unused
	listen         string
	allowRemote    bool
	tokenFile      string
	state          string
	maxConnections int
}

func inboxFlagSet() (*flag.FlagSet, *inboxFlags) {
	fs := flag.NewFlagSet("inbox", flag.ContinueOnError)
	f := new(inboxFlags)
	fs.StringVar(&f.listen, "listen", "", "serve the approvals page (/) and the decisions HTTP API (/v1) on ADDR (host:port, loopback unless --allow-remote; port 0 picks a free one); required")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow --listen on a non-loopback address (logs a warning; the token is still required)")
	fs.StringVar(&f.tokenFile, "token-file", "", "bearer token file for --listen: read if it exists and is not empty, else a fresh 256-bit token is written there (mode 0600) (default $XDG_STATE_HOME/acpmux/token)")
	fs.StringVar(&f.state, "state", "", "the decision store the bridges share: a SQLite file or a postgres:// URL (password from the URL, $PGPASSWORD or $PGPASSFILE) (default $XDG_STATE_HOME/acpmux/state.db)")
	fs.IntVar(&f.maxConnections, "max-connections", httpapi.DefaultMaxConnections, "at most N connections to --listen at once; at the cap the oldest connection that has not shown the token is closed, or a new one is refused")
	fs.StringVar(&f.logLevel, "log-level", envOr("ACPMUX_LOG", "info"), "log level: debug, info, warn, error (env ACPMUX_LOG)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log line format: text (key=value) or json (one object per line)")
	fs.StringVar(&f.logFile, "log-file", "", "append logs to this file (created with mode 0600) instead of stderr")
	registerConfigFlag(fs)
	return fs, f
}

func inboxMain(args []string, s stdio) int {
	fs, f := inboxFlagSet()
	help := func(w io.Writer) {
		fmt.Fprint(w, inboxUsage)
		writeFlags(w, fs)
	}
	if done, code := parseArgs("inbox", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if _, _, err := applyConfig("inbox", fs); err != nil {
		fmt.Fprintln(s.err, "acpmux inbox:", err)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(s.err, "acpmux inbox: takes no arguments (got %q); usage: acpmux inbox --listen ADDR [--state FILE|postgres://...]\n", fs.Arg(0))
		return 2
	case f.listen == "":
		fmt.Fprintln(s.err, "acpmux inbox: --listen ADDR is required (e.g. --listen 127.0.0.1:7777, or 127.0.0.1:0 for a free port); usage: acpmux inbox --listen ADDR [--state FILE|postgres://...]")
		return 2
	}
	if _, err := httpapi.CheckListenAddr(f.listen, f.allowRemote); err != nil {
		fmt.Fprintln(s.err, "acpmux inbox:", err)
		return 2
	}
	log, closeLog, err := f.logger(s.err)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux inbox:", err)
		return loggerStatus(err)
	}
	defer closeLog()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runInbox(ctx, f, s.err, log); err != nil {
		fmt.Fprintln(s.err, "acpmux inbox:", err)
		return 1
	}
	return 0
}

// runInbox serves the inbox until ctx ends.
func runInbox(ctx context.Context, f *inboxFlags, stderr io.Writer, log *slog.Logger) error {
	where, err := existingStore(f.state) // storecheck.go
	if errors.Is(err, errNotAStore) && !postgres.IsURL(f.state) {
		if fi, serr := os.Stat(where); serr == nil && fi.Size() > 0 {
			// Another program's SQLite database (or a copy without its
			// -wal file): the inbox would add its tables to it and show
			// nothing. (A new PostgreSQL database is empty like this too,
			// and is where a store begins.)
			return fmt.Errorf("--state %s: %w: pass the --state your bridges use", where, err)
		}
	}
	fresh := errors.Is(err, errNoStore) || errors.Is(err, errNotAStore)
	st, err := openStateOr(f.state, "") // state.go: no --state :memory: advice, which the inbox refuses
	if err != nil {
		return err
	}
	defer st.Close()
	if _, ok := st.(store.Shared); !ok || !st.Durable() {
		return errors.New("--state: the inbox needs a store bridges can share (a SQLite file or a postgres:// URL)")
	}
	if fresh {
		// Not refused: the inbox may start before the first bridge. But a
		// mistyped --state would show an empty inbox and say nothing: name
		// the file in full. (Said once the store opened: a --state that
		// cannot be created is an error, not this.)
		if abs, err := filepath.Abs(where); err == nil && !postgres.IsURL(where) {
			where = abs
		}
		log.Warn("no bridge has used this store yet: the inbox creates it, and shows decisions once bridges run with the same --state", "state", redactState(where))
	}
	broker, err := confirm.NewBroker(confirm.Options{Store: st, Inbox: true, Logger: log})
	if err != nil {
		return err
	}
	token, tokenFile, err := loadToken(f.tokenFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return listenError(f.listen, err) // hints.go
	}
	if remote, _ := httpapi.CheckListenAddr(f.listen, f.allowRemote); remote {
		log.Warn("the inbox listens on a non-loopback address; anyone who can reach it and has the token can answer every bridge's permission requests", "addr", ln.Addr().String())
	}
	lln := httpapi.LimitListener(ln, f.maxConnections, log)
	routes := map[string]http.Handler{"GET /{$}": web.Index(), "GET /static/": web.Static()}
	if fd, ok := st.(store.Feed); ok { // every bridge's events (docs/decisions.md, "Events")
		routes["GET /v1/events"] = httpapi.Events(storeFeed{fd}, httpapi.EventsOptions{Logger: log})
	}
	people, _ := st.(store.People) // per-person tokens and roles, as for run (docs/tokens.md)
	srv := httpapi.NewServer(httpapi.New(broker, httpapi.Options{Addr: ln.Addr().String(), Token: token, Version: version,
		HostID: "inbox", Logger: log, Routes: routes, People: people}), log)
	base := "http://" + ln.Addr().String()
	log.Info("inbox listening", "url", base, "token_file", tokenFile, "state", st.Path())
	fmt.Fprintf(stderr, "acpmux: inbox page: %s/?token=%s\n", base, token)
	sctx, cancel := context.WithCancel(context.Background())
	sharedDone := make(chan error, 1)
	go func() { sharedDone <- broker.RunShared(sctx, confirm.SharedOptions{}) }()
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(lln) }()
	select {
	case <-ctx.Done():
	case err = <-serveDone:
	}
	shutdown(srv)
	cancel()
	if serr := <-sharedDone; serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// loadToken reads or creates the --token-file token.
func loadToken(tokenFile string) (token, path string, err error) {
	if tokenFile == "" {
		if tokenFile, err = httpapi.DefaultTokenPath(); err != nil {
			return "", "", fmt.Errorf("--token-file: %w", err)
		}
	}
	token, err = httpapi.LoadOrCreateToken(tokenFile)
	if err != nil {
		return "", "", fmt.Errorf("--token-file: %w", err)
	}
	return token, tokenFile, nil
}

// shutdown stops srv, waiting up to 2 seconds for its requests.
func shutdown(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}
