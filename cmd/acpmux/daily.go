package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

// defaultRetain is how long closed decisions are kept (--retain).
const defaultRetain = 30 * 24 * time.Hour

// pruneEvery is how often a running relay prunes its store.
var pruneEvery = time.Hour

// dailyFlags are the flags of run and stream-json for living with acpmux
// all day: the transcript and the retention of the store.
type dailyFlags struct {
	record string
	retain retainFlag
}

func (f *dailyFlags) register(fs *flag.FlagSet) {
	f.retain = retainFlag(defaultRetain)
	fs.StringVar(&f.record, "record", "", "write every message both ways to FILE as NDJSON (time, direction, host id; tokens and Authorization values redacted), for bug reports; read it with acpmux replay (docs/record.md)")
	fs.Var(&f.retain, "retain", "delete closed decisions, their journal and events older than this (Go duration or days such as 30d; 0 keeps everything), at start and hourly; audit rows and ALWAYS grants stay")
}

// retainFlag is a duration flag that also takes days ("30d").
type retainFlag time.Duration

func (r *retainFlag) String() string { return formatRetain(time.Duration(*r)) }

func (r *retainFlag) Set(s string) error {
	d, err := parseRetain(s)
	if err != nil {
		return err
	}
	*r = retainFlag(d)
	return nil
}

// parseRetain reads a Go duration ("720h") or a whole number of days
// ("30d"); it must not be negative.
func parseRetain(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: want days such as 30d, or a Go duration such as 12h", s)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("invalid duration %q: want days such as 30d, or a Go duration such as 12h", s)
		}
	}
	if d < 0 {
		return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
	}
	return d, nil
}

func formatRetain(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.String()
}

// daily is what the relay runs for the daily-use features: the event feed
// of GET /v1/events, the --record transcript and the --retain pruning.
type daily struct {
	log     *slog.Logger
	feed    *feedWriter      // nil when the store has no feed
	rec     *bridge.Recorder // nil without --record
	recFile *os.File
	pruner  store.Pruner // nil when the store cannot prune
	retain  time.Duration

	wg   sync.WaitGroup
	stop chan struct{}
}

// openDaily builds the feed writer (its events carry bridgeID, the
// relay's bridge id in st), the recorder (opening --record) and the
// pruner for st. It starts nothing.
func openDaily(f *dailyFlags, st store.Store, bridgeID string, log *slog.Logger) (*daily, error) {
	d := &daily{log: log, retain: time.Duration(f.retain), stop: make(chan struct{})}
	if fs, ok := st.(store.Feed); ok {
		d.feed = newFeedWriter(fs, bridgeID, log)
	}
	if p, ok := st.(store.Pruner); ok {
		d.pruner = p
	}
	if f.record != "" {
		file, err := os.OpenFile(f.record, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		d.recFile = file
		opts := bridge.RecorderOptions{Logger: log}
		if people, ok := st.(store.People); ok {
			opts.IsToken = (&personTokens{people: people, now: time.Now}).isToken // record_tokens.go
		}
		d.rec = bridge.NewRecorder(file, opts)
	}
	if d.pruner != nil && d.retain > 0 {
		d.prune() // at start, before any host: then hourly (start)
	}
	return d, nil
}

// onOpen chains the feed's confirm.Options.OnOpen before next (may be nil).
func (d *daily) onOpen(next func(*confirm.Decision)) func(*confirm.Decision) {
	if d.feed == nil {
		return next
	}
	return func(dec *confirm.Decision) {
		d.feed.opened(dec)
		if next != nil {
			next(dec)
		}
	}
}

// bridgeOptions sets the bridge's OnSession and Tap.
func (d *daily) bridgeOptions(o bridge.Options) bridge.Options {
	if d.feed != nil {
		o.OnSession = d.feed.sessionStarted
	}
	if d.rec != nil {
		o.Tap = d.rec
	}
	return o
}

// secret keeps s (a token) out of the transcript.
func (d *daily) secret(s string) {
	if d.rec != nil {
		d.rec.AddSecret(strings.TrimSpace(s))
	}
}

// start runs the feed writer, the recorder and the pruning.
func (d *daily) start() {
	if d.feed != nil {
		d.wg.Go(d.feed.run)
	}
	if d.rec != nil {
		d.wg.Go(func() { d.rec.Run() })
	}
	if d.pruner != nil && d.retain > 0 {
		d.wg.Go(d.pruneLoop)
	}
}

// pruneLoop prunes every pruneEvery until stop (openDaily pruned at
// start).
func (d *daily) pruneLoop() {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			d.prune()
		case <-d.stop:
			return
		}
	}
}

func (d *daily) prune() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := time.Now().Add(-d.retain)
	res, err := d.pruner.Prune(ctx, before)
	if err != nil {
		d.log.Warn("prune the decision store", "err", err)
		return
	}
	if res.Decisions > 0 || res.Feed > 0 || res.Bridges > 0 {
		d.log.Info("pruned the decision store", "before", before.UTC().Format(time.RFC3339), "decisions", res.Decisions, "events", res.Feed, "bridges", res.Bridges)
	}
}

// sessionsEnded adds session.ended for every session of b.
func (d *daily) sessionsEnded(b *confirm.Broker, exitCode int) {
	if d.feed != nil {
		d.feed.sessionsEnded(b.Sessions(), exitCode)
	}
}

// close stops everything start started, after the broker has closed its
// decisions: the feed is written out, the transcript flushed, synced to
// the disk (fsync) and closed.
func (d *daily) close() {
	close(d.stop)
	if d.feed != nil {
		d.feed.close()
	}
	if d.rec != nil {
		d.rec.Close()
		d.rec.Wait()
		if n := d.rec.Dropped(); n > 0 {
			d.log.Warn("record: messages not recorded (the file was too slow)", "dropped", n)
		}
		if err := d.recFile.Sync(); err != nil {
			d.log.Warn("record: sync the transcript", "err", err)
		}
		if err := d.recFile.Close(); err != nil {
			d.log.Warn("record: close the transcript", "err", err)
		}
	}
	d.wg.Wait()
}
