package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

func init() {
	register(command{name: "audit", summary: "list the audit rows (plan items) of permission requests from the store", run: auditMain})
}

const auditUsage = `Usage: acpmux audit [--session ID] [--json] [--state PATH|URL] [--limit N]
       acpmux audit verify [--state PATH|URL]

Prints the audit row of every permission request acpmux saw: what was asked
(kind, title, command, class and reasons, diff preview), how the plan-mode
gate and the policy routed it, what the agent got and who decided it (a
rule, a builtin, a host, or acpmux failing closed), and when. Rows are
written once, when the request is decided, and never change afterwards.
Reads the decision store directly (no running acpmux needed).

Exit status: 0 success, 1 the store could not be read, 2 usage error.

Flags:
`

func auditMain(args []string, s stdio) int {
	if len(args) > 0 && args[0] == "verify" {
		return auditVerifyMain(args[1:], s) // audit_verify.go
	}
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	var session, state string
	var asJSON bool
	var limit int
	fs.StringVar(&session, "session", "", "only the rows of this ACP session id")
	fs.BoolVar(&asJSON, "json", false, "print a JSON array of plan items")
	fs.StringVar(&state, "state", "", "decision store: a SQLite file or a postgres:// URL (default $XDG_STATE_HOME/acpmux/state.db)")
	fs.IntVar(&limit, "limit", 1000, "print at most the N most recent rows")
	help := func(w io.Writer) { fmt.Fprint(w, auditUsage); writeFlags(w, fs) }
	if done, code := parseArgs("audit", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "acpmux audit: unexpected argument %q\nRun 'acpmux audit --help' for usage.\n", fs.Arg(0))
		return 2
	}
	if limit <= 0 {
		fmt.Fprintf(s.err, "acpmux audit: --limit %d: must be at least 1\n", limit)
		return 2
	}
	if state == "" {
		p, err := sqlite.DefaultPath()
		if err != nil {
			fmt.Fprintln(s.err, "acpmux audit:", err)
			return 1
		}
		state = p
	}
	if _, err := os.Stat(state); err != nil && state != sqlite.MemoryPath && !postgres.IsURL(state) {
		if errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(s.err, "acpmux audit: no decision store at %s: acpmux run creates it; pass --state with the file or postgres:// URL it used\n", state)
		} else {
			fmt.Fprintln(s.err, "acpmux audit: no decision store:", err)
		}
		return 1
	}
	st, err := openStateOr(state, "") // state.go: :memory: holds nothing to read
	if err != nil {
		fmt.Fprintln(s.err, "acpmux audit:", err)
		return 1
	}
	defer st.Close()
	rows, err := st.PlanItems(context.Background(), session, limit)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux audit:", err)
		return 1
	}
	items, err := gate.DecodePlanItems(rows)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux audit:", err)
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		enc.Encode(items)
		return 0
	}
	printItems(s, items)
	return 0
}

// printItems prints one line per plan item, with text from the agent
// through safe (quoted when it holds a hidden character).
func printItems(s stdio, items []gate.PlanItem) {
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DECIDED\tSESSION\tKIND\tMODE\tROUTE\tDECISION\tDECIDED BY\tCLASS\tWHAT")
	for _, it := range items {
		what := it.Command
		if what == "" {
			what = it.Title
		}
		dec := it.Decision
		if it.Downgraded {
			dec += " (ask downgraded)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.DecidedAt.Local().Format(time.DateTime), it.SessionID,
			it.Kind, it.Mode, it.Route, dec, answerer(it.Person, it.DecidedBy), it.Class, safe(what))
	}
	tw.Flush()
}
