package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpmux/acpmux/confirm/identity"
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
	// MaxStreamsPerPerson bounds the streams one person (one token; the
	// --token-file token is LegacyPerson) has open at once; 0 means
	// DefaultMaxStreamsPerPerson.
	MaxStreamsPerPerson int
}

// Defaults of EventsOptions.
const (
	DefaultHeartbeat           = 15 * time.Second
	DefaultPoll                = time.Second
	DefaultMaxStreamsPerPerson = 8
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
// that the token is required. A person has at most MaxStreamsPerPerson
// streams open, and all streams together take at most half of the
// connections of the [LimitListener] serving them (half of
// DefaultMaxConnections without one), so that streams never lock out the
// other requests: a stream over either bound is refused with 429
// Too Many Requests, error code "too_many_streams". A Last-Event-ID or
// after that is not a canonical non-negative decimal ("0", "17"; no sign,
// no leading zero), or is given more than once, is refused with 400,
// code "invalid_last_event_id". See docs/decisions.md, "Events".
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
	if opts.MaxStreamsPerPerson <= 0 {
		opts.MaxStreamsPerPerson = DefaultMaxStreamsPerPerson
	}
	lim := &streamLimits{perPerson: opts.MaxStreamsPerPerson, open: map[string]int{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveEvents(src, opts, lim, w, r) })
}

// canonicalID is a non-negative decimal without sign or leading zeros.
var canonicalID = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)

// resumeID reads Last-Event-ID, else ?after=; ok is false when neither is
// given, and err is set when one is given more than once or is not a
// canonical non-negative decimal that fits an int64.
func resumeID(r *http.Request) (id int64, ok bool, err error) {
	name, vs := "Last-Event-ID", r.Header.Values("Last-Event-ID")
	if len(vs) == 1 && vs[0] == "" {
		vs = nil // an empty header: no id, as the SSE spec's initial state
	}
	if len(vs) == 0 {
		name, vs = "after", r.URL.Query()["after"]
	}
	switch {
	case len(vs) == 0:
		return 0, false, nil
	case len(vs) > 1:
		return 0, false, fmt.Errorf("%s is given %d times: give it once", name, len(vs))
	}
	v := vs[0]
	if canonicalID.MatchString(v) {
		if id, err = strconv.ParseInt(v, 10, 64); err == nil {
			return id, true, nil
		}
	}
	return 0, false, fmt.Errorf("%s %q: want a non-negative decimal event id such as 0 or 17 (no sign, no leading zeros)", name, v)
}

// streamLimits counts the open streams of each person, and of all persons
// when the connection has no [LimitListener] to count them.
type streamLimits struct {
	perPerson int
	mu        sync.Mutex // guards open and total
	open      map[string]int
	total     int
}

// acquire counts a new stream of r's person, or returns why it is refused.
func (s *streamLimits) acquire(r *http.Request) (release func(), refused string) {
	name := LegacyPerson
	if p, ok := identity.PersonFrom(r.Context()); ok {
		name = p.Name
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[name] >= s.perPerson {
		return nil, fmt.Sprintf("%s already has %d event streams open, the most one person may (docs/decisions.md, \"Events\"); close one first", name, s.open[name])
	}
	var releaseTotal func()
	if lc, ok := r.Context().Value(connKey{}).(*limitConn); ok {
		if releaseTotal, refused = lc.l.acquireStream(); refused != "" {
			return nil, refused
		}
	} else {
		if s.total >= DefaultMaxConnections/2 {
			return nil, fmt.Sprintf("%d event streams are open, the most there may be; close one first", s.total)
		}
		s.total++
		releaseTotal = func() { s.mu.Lock(); s.total--; s.mu.Unlock() }
	}
	s.open[name]++
	var once sync.Once
	return func() {
		once.Do(func() {
			releaseTotal()
			s.mu.Lock()
			if s.open[name]--; s.open[name] <= 0 {
				delete(s.open, name)
			}
			s.mu.Unlock()
		})
	}, ""
}

func serveEvents(src FeedSource, opts EventsOptions, lim *streamLimits, w http.ResponseWriter, r *http.Request) {
	last, resume, err := resumeID(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_last_event_id", err.Error())
		return
	}
	release, refused := lim.acquire(r)
	if refused != "" {
		writeError(w, http.StatusTooManyRequests, "too_many_streams", refused)
		return
	}
	defer release()
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
