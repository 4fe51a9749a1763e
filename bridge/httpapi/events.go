package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// FeedSource is what GET /v1/events streams: the store's event feed and a
// signal of appends made in this process (appends of other processes
// sharing the store are found by polling).
type FeedSource interface {
	store.Feed
	// Changed returns a channel that is closed at the next append of this
	// process.
	Changed() <-chan struct{}
}

// EventsOptions configure [Events]. The zero value is usable.
type EventsOptions struct {
	// Heartbeat is the interval of the SSE comment that keeps proxies
	// from closing an idle stream; 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// Poll is how often the feed is read for appends of other processes;
	// 0 means DefaultPoll.
	Poll time.Duration
	// Logger receives a line when reading the feed fails; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Defaults of EventsOptions.
const (
	DefaultHeartbeat = 15 * time.Second
	DefaultPoll      = time.Second
)

// eventsPage is how many feed events one read takes.
const eventsPage = 200

// Events returns the handler of GET /v1/events: the feed of src as
// Server-Sent Events (https://html.spec.whatwg.org/multipage/server-sent-events.html),
// one event per [store.FeedEvent] with "id:" its ID, "event:" its Type and
// "data:" the FeedEvent as one JSON object. A request with a
// Last-Event-ID header (or the query parameter after=N) gets every event
// after that id still in the store, then the new ones; without either it
// gets only events appended after it connected. A comment line is sent
// every Heartbeat. Serve it behind the guard of [New] (Options.Routes), so
// that the token is required. See docs/decisions.md, "Events".
func Events(src FeedSource, opts EventsOptions) http.Handler {
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveEvents(src, opts, w, r) })
}

// resumeID reads Last-Event-ID, else ?after=; ok is false when neither is
// given, and err is set when one is not a non-negative integer.
func resumeID(r *http.Request) (id int64, ok bool, err error) {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, false, nil
	}
	id, err = strconv.ParseInt(v, 10, 64)
	if err != nil || id < 0 {
		return 0, false, fmt.Errorf("Last-Event-ID %q: want a non-negative integer", v)
	}
	return id, true, nil
}

func serveEvents(src FeedSource, opts EventsOptions, w http.ResponseWriter, r *http.Request) {
	last, resume, err := resumeID(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_last_event_id", err.Error())
		return
	}
	ctx := r.Context()
	if !resume {
		if last, err = src.LastFeedID(ctx); err != nil {
			opts.Logger.Error("httpapi: read the event feed", "err", err)
			writeError(w, http.StatusServiceUnavailable, "events_unavailable", "cannot read the event feed")
			return
		}
	}
	rc := http.NewResponseController(w)
	// The server's ReadTimeout would end the stream; it has no body to read.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n: acpmux events\n\n")
	if rc.Flush() != nil {
		return
	}
	beat := time.NewTicker(opts.Heartbeat)
	defer beat.Stop()
	poll := time.NewTicker(opts.Poll)
	defer poll.Stop()
	for {
		changed := src.Changed() // before reading: an append after the read closes it
		var ok bool
		if last, ok = sendEvents(ctx, src, w, last, opts.Logger); !ok || rc.Flush() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-poll.C:
		case <-beat.C:
			fmt.Fprint(w, ": heartbeat\n\n")
		}
	}
}

// sendEvents writes every event after last and returns the last id
// written; ok is false when the client or the store failed.
func sendEvents(ctx context.Context, src store.Feed, w http.ResponseWriter, last int64, log *slog.Logger) (int64, bool) {
	for {
		evs, err := src.FeedAfter(ctx, last, eventsPage)
		if err != nil {
			if ctx.Err() == nil {
				log.Error("httpapi: read the event feed", "err", err)
			}
			return last, false
		}
		for _, ev := range evs {
			b, err := json.Marshal(ev)
			if err != nil {
				return last, false
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, sseField(string(ev.Type)), b); err != nil {
				return last, false
			}
			last = ev.ID
		}
		if len(evs) < eventsPage {
			return last, true
		}
	}
}

// sseField keeps a value on one SSE line.
func sseField(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
