package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// watchBackoff is the wait before reconnecting after the stream ended;
// it doubles up to watchMaxBackoff while connecting fails.
var (
	watchBackoff    = 500 * time.Millisecond
	watchMaxBackoff = 10 * time.Second
)

// watch prints the events of GET /v1/events until SIGINT or SIGTERM
// (exit status 0), reconnecting with Last-Event-ID after the stream ends.
func (c *apiClient) watch(out, errw io.Writer, f decisionsFlags) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.watchEvents(ctx, out, errw, f.after, f.asJSON)
}

// watchEvents prints every event after id after (-1: only new ones) until
// ctx ends, one line each, reconnecting where it left off.
func (c *apiClient) watchEvents(ctx context.Context, out, errw io.Writer, after int64, asJSON bool) error {
	hc := &http.Client{Transport: c.http.Transport} // no overall timeout: the stream is long
	wait := watchBackoff
	for {
		got, err := c.stream(ctx, hc, after, func(ev store.FeedEvent, raw []byte) {
			after = ev.ID
			if asJSON {
				fmt.Fprintf(out, "%s\n", raw)
			} else {
				fmt.Fprintln(out, eventLine(ev))
			}
		})
		if ctx.Err() != nil {
			return nil
		}
		if ae, ok := err.(*apiError); ok && ae.status != http.StatusServiceUnavailable {
			return err // 401, 404: reconnecting will not help
		}
		if got {
			wait = watchBackoff
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("the event stream broke off (the bridge or inbox stopped?)")
		}
		if err != nil {
			fmt.Fprintf(errw, "acpmux decisions watch: %v; reconnecting in %v\n", err, wait)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		if !got {
			wait = min(2*wait, watchMaxBackoff)
		}
	}
}

// stream reads one connection's events; got says whether it connected.
func (c *apiClient) stream(ctx context.Context, hc *http.Client, after int64, emit func(store.FeedEvent, []byte)) (got bool, err error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base.String()+"/v1/events", nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "text/event-stream")
	if after >= 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, unreachable(c.base.String(), err) // hints.go
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, &apiError{status: resp.StatusCode, code: "http_error", msg: strings.TrimSpace(string(b))}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				var ev store.FeedEvent
				if err := json.Unmarshal([]byte(data.String()), &ev); err == nil {
					emit(ev, []byte(data.String()))
				}
				data.Reset()
			}
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	return true, fmt.Errorf("the event stream ended")
}

// eventLine is one event for a person: time, event id, type, session,
// decision and what the event says; the time, id and type are columns of
// fixed width (ids up to six digits).
func eventLine(ev store.FeedEvent) string {
	var d struct {
		Title, Command, Status, Reason, ResolvedBy, Person, OptionID, Cwd string
		AgentExitCode                                                     *int
	}
	json.Unmarshal(ev.Data, &d)
	what := ""
	switch ev.Type {
	case store.FeedDecisionOpened:
		what = d.Title
		if d.Command != "" {
			what = d.Command
		}
		what = oneLine(what, 80)
	case store.FeedDecisionAnswered:
		what = "by " + answerer(d.Person, d.ResolvedBy) + ": " + safe(d.OptionID)
	case store.FeedDecisionClosed:
		what = string(d.Status)
		if d.Reason != "" && d.Reason != string(store.ReasonAnswered) {
			what += " (" + safe(d.Reason) + ")"
		}
	case store.FeedSessionStarted:
		what = "cwd " + safe(d.Cwd)
	case store.FeedSessionEnded:
		if d.AgentExitCode != nil {
			what = fmt.Sprintf("agent exit status %d", *d.AgentExitCode)
		}
	}
	dec := ev.DecisionID
	if dec == "" {
		dec = "-"
	}
	// "#id" padded to 7: the type column stays put up to id 999999.
	return fmt.Sprintf("%s  %-7s  %-17s  %s  %s  %s", ev.At.Local().Format(time.TimeOnly), fmt.Sprint("#", ev.ID), ev.Type,
		safe(ev.SessionID), safe(dec), what)
}
