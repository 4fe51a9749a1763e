package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

// feedQueueLen bounds the feed events waiting to be written to the store.
const feedQueueLen = 1024

// feedWriter appends the events of GET /v1/events (decision opened,
// answered, closed; session started, ended) to the store's feed from one
// goroutine, so that neither the broker nor the bridge waits for the store.
// A full queue drops the event (counted and logged). run writes until close.
type feedWriter struct {
	st      store.Feed
	bridge  string // the relay's bridge id (store.Bridge.ID), on every event it adds
	log     *slog.Logger
	now     func() time.Time
	queue   chan store.FeedEvent
	dropped atomic.Int64
	stop    chan struct{}  // closed by close: watchers stop waiting
	watch   sync.WaitGroup // one per open decision
	done    chan struct{}  // closed when run has written everything

	mu      sync.Mutex    // guards changed
	changed chan struct{} // closed and replaced after each append
}

// newFeedWriter returns the writer of a relay whose bridge id in st is
// bridgeID ("" for a store no other process shares).
func newFeedWriter(st store.Feed, bridgeID string, log *slog.Logger) *feedWriter {
	return &feedWriter{st: st, bridge: bridgeID, log: log, now: time.Now, queue: make(chan store.FeedEvent, feedQueueLen),
		stop: make(chan struct{}), done: make(chan struct{}), changed: make(chan struct{})}
}

// Changed implements httpapi.FeedSource.
func (f *feedWriter) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// FeedAfter implements httpapi.FeedSource.
func (f *feedWriter) FeedAfter(ctx context.Context, after int64, limit int) ([]store.FeedEvent, error) {
	return f.st.FeedAfter(ctx, after, limit)
}

// LastFeedID implements httpapi.FeedSource.
func (f *feedWriter) LastFeedID(ctx context.Context) (int64, error) { return f.st.LastFeedID(ctx) }

// AppendFeed implements httpapi.FeedSource; the relay appends through add.
func (f *feedWriter) AppendFeed(ctx context.Context, ev store.FeedEvent) (store.FeedEvent, error) {
	ev, err := f.st.AppendFeed(ctx, ev)
	if err == nil {
		f.mu.Lock()
		close(f.changed)
		f.changed = make(chan struct{})
		f.mu.Unlock()
	}
	return ev, err
}

// add queues one event without waiting.
func (f *feedWriter) add(typ store.FeedType, sessionID, decisionID string, data any) {
	raw, _ := json.Marshal(data)
	ev := store.FeedEvent{At: f.now().UTC(), Type: typ, SessionID: sessionID, DecisionID: decisionID, BridgeID: f.bridge, Data: raw}
	select {
	case f.queue <- ev:
	default:
		if n := f.dropped.Add(1); n == 1 || n%100 == 0 {
			f.log.Warn("event feed queue full; event dropped", "type", typ, "dropped", n)
		}
	}
}

// opened is confirm.Options.OnOpen: decision.opened now, then
// decision.answered (when a host's answer won) and decision.closed when d
// closes.
func (f *feedWriter) opened(d *confirm.Decision) {
	v := d.View()
	opts := make([]string, 0, len(v.Options))
	for _, o := range v.Options {
		opts = append(opts, o.OptionID)
	}
	f.add(store.FeedDecisionOpened, v.SessionID, v.ID, map[string]any{"kind": v.Kind, "title": v.Title,
		"command": v.Command, "options": opts, "deadline": v.Deadline})
	f.watch.Go(func() {
		select {
		case <-d.Done():
		case <-f.stop:
			return
		}
		v := d.View()
		if v.Status == store.StatusAnswered {
			a := map[string]any{"resolvedBy": v.ResolvedBy}
			if v.AnsweredBy != "" {
				a["person"] = v.AnsweredBy
			}
			if v.Answer != nil {
				a["optionId"], a["text"] = v.Answer.OptionID, v.Answer.Text
			}
			f.add(store.FeedDecisionAnswered, v.SessionID, v.ID, a)
		}
		f.add(store.FeedDecisionClosed, v.SessionID, v.ID, map[string]any{"status": v.Status, "reason": v.Reason,
			"resolvedBy": v.ResolvedBy})
	})
}

// sessionStarted is bridge.Options.OnSession.
func (f *feedWriter) sessionStarted(sessionID, cwd string) {
	f.add(store.FeedSessionStarted, sessionID, "", map[string]any{"cwd": cwd})
}

// sessionsEnded adds session.ended for each of sessions: the relay
// stopped, so none of them goes on.
func (f *feedWriter) sessionsEnded(sessions []confirm.SessionView, exitCode int) {
	for _, s := range sessions {
		f.add(store.FeedSessionEnded, s.SessionID, "", map[string]any{"agentExitCode": exitCode})
	}
}

// run appends queued events until close; a store error is logged and the
// event lost.
func (f *feedWriter) run() {
	defer close(f.done)
	for ev := range f.queue {
		if _, err := f.AppendFeed(context.Background(), ev); err != nil {
			f.log.Warn("event feed: cannot store event", "type", ev.Type, "err", err)
		}
	}
}

// close waits (up to a second) for the decisions still watched to close,
// then writes what is queued and returns after run has ended.
func (f *feedWriter) close() {
	waited := make(chan struct{})
	go func() { f.watch.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(time.Second):
		close(f.stop)
		<-waited
	}
	close(f.queue)
	<-f.done
}
