package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

func init() {
	register(command{name: "prune", summary: "delete closed decisions older than a date or age from the store", run: pruneMain})
}

const pruneUsage = `Usage: acpmux prune [--before DATE | --retain AGE] [--state PATH|URL] [--json]

Deletes from the decision store every closed decision (answered, timed out,
cancelled) that closed before DATE, with its journal, its events
(GET /v1/events) and the notes other processes left for it, session
events older than DATE, and the registry rows of bridges (processes
sharing the store) whose last heartbeat is older than DATE and that have
no decision left. Open decisions, the
audit rows (acpmux audit), remembered ALWAYS verdicts and the decisions
they were granted by are kept. "acpmux run" does the same at start and
hourly with --retain (default 30d). See docs/decisions.md, "Retention".

DATE is RFC 3339 (2026-07-01T12:00:00Z) or a day (2026-07-01, midnight
local time); without --before, DATE is now minus --retain. --before and
--retain together are a usage error; --retain 0 is refused, since for
"acpmux run" it means keep everything. The store must exist and be an
acpmux store: prune never creates one.

Exit status: 0 success, 1 the store does not exist or could not be opened
or pruned, 2 usage error.

Flags:
`

func pruneMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	var state, before string
	var asJSON bool
	retain := retainFlag(defaultRetain)
	fs.StringVar(&state, "state", "", "decision store: a SQLite file or a postgres:// URL (default $XDG_STATE_HOME/acpmux/state.db)")
	fs.StringVar(&before, "before", "", "delete what closed before DATE (RFC 3339, or YYYY-MM-DD)")
	fs.Var(&retain, "retain", "without --before: delete what closed longer ago than this (30d, 12h)")
	fs.BoolVar(&asJSON, "json", false, `print {"before", "decisions", "feed", "bridges"} as JSON`)
	help := func(w io.Writer) { fmt.Fprint(w, pruneUsage); writeFlags(w, fs) }
	if done, code := parseArgs("prune", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "acpmux prune: unexpected argument %q\nRun 'acpmux prune --help' for usage.\n", fs.Arg(0))
		return 2
	}
	retainSet := false
	fs.Visit(func(f *flag.Flag) { retainSet = retainSet || f.Name == "retain" })
	switch {
	case retainSet && before != "":
		fmt.Fprintln(s.err, "acpmux prune: --before and --retain exclude each other: give one")
		return 2
	case retainSet && retain == 0:
		fmt.Fprintln(s.err, "acpmux prune: --retain 0 means keep everything (as for acpmux run): nothing to prune; give a positive age (30d, 12h) or --before DATE")
		return 2
	}
	cut := time.Now().Add(-time.Duration(retain))
	if before != "" {
		var err error
		if cut, err = parseDate(before); err != nil {
			if _, aerr := parseDays(before); aerr == nil {
				err = fmt.Errorf("%w; for an age use --retain %s", err, before)
			}
			fmt.Fprintln(s.err, "acpmux prune: --before:", err)
			return 2
		}
	}
	st, err := openExistingStore(state) // storecheck.go
	if err != nil {
		fmt.Fprintln(s.err, "acpmux prune:", err)
		return 1
	}
	defer st.Close()
	p, ok := st.(store.Pruner)
	if !ok {
		fmt.Fprintln(s.err, "acpmux prune: this store cannot be pruned")
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := p.Prune(ctx, cut)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux prune:", err)
		return 1
	}
	if asJSON {
		b, _ := json.Marshal(struct {
			Before time.Time `json:"before"`
			store.PruneResult
		}{cut.UTC(), res})
		fmt.Fprintf(s.out, "%s\n", b)
		return 0
	}
	fmt.Fprintf(s.out, "pruned %d closed decisions, %d events and %d gone bridges from before %s (%s)\n",
		res.Decisions, res.Feed, res.Bridges, cut.Local().Format(time.RFC3339), st.Path())
	return 0
}

// parseDate reads RFC 3339 or a day (YYYY-MM-DD, midnight local time).
func parseDate(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-07-01T12:00:00Z) or a day (2026-07-01)", s)
}
