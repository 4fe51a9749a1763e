package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

func init() {
	register(command{name: "always", summary: "list and revoke remembered ALWAYS verdicts (answers given with scope ALWAYS)", run: alwaysMain})
}

const alwaysUsage = `Usage: acpmux always list [--json] [--state PATH|URL]
       acpmux always revoke DECISION_ID... [--state PATH|URL]
       acpmux always revoke --all [--state PATH|URL]

An answer given with scope ALWAYS is remembered in the decision store: every
later request of the same agent, kind and command (or title) is allowed or
denied without asking, in every acpmux sharing the store (docs/policy.md,
"Scopes"). "list" shows them with the decision that granted each (the
always:DECISION_ID of the log and of acpmux audit); "revoke" deletes them.
A revoked verdict stops applying at once, in running bridges too: the next
such request is asked again.

Exit status: 0 success, 1 the store failed or a DECISION_ID granted no
remembered verdict, 2 usage error.

Flags:
`

func alwaysMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("always", flag.ContinueOnError)
	var state string
	var asJSON, all bool
	fs.StringVar(&state, "state", "", "decision store: a SQLite file or a postgres:// URL (default $XDG_STATE_HOME/acpmux/state.db)")
	fs.BoolVar(&asJSON, "json", false, "list: print a JSON array")
	fs.BoolVar(&all, "all", false, "revoke: every remembered verdict")
	help := func(w io.Writer) { fmt.Fprint(w, alwaysUsage); writeFlags(w, fs) }
	var pos []string
	if done, code := parseArgs("always", fs, s, help, func() (err error) { pos, err = parseInterleaved(fs, args); return err }); done {
		return code
	}
	usage := func(msg string) int {
		fmt.Fprintf(s.err, "acpmux always: %s\nRun 'acpmux always --help' for usage.\n", msg)
		return 2
	}
	switch {
	case len(pos) == 0:
		return usage("missing subcommand (list or revoke)")
	case pos[0] == "list" && len(pos) > 1:
		return usage("list takes no arguments")
	case pos[0] == "revoke" && all == (len(pos) > 1):
		return usage("revoke takes the DECISION_ID of each verdict (acpmux always list shows them), or --all")
	case pos[0] != "list" && pos[0] != "revoke":
		return usage(fmt.Sprintf("unknown subcommand %q (want list or revoke)", pos[0]))
	}
	st, err := openExistingStore(state) // storecheck.go
	if err != nil {
		fmt.Fprintln(s.err, "acpmux always:", err)
		return 1
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rules, err := st.Rules(ctx)
	if err != nil {
		fmt.Fprintln(s.err, "acpmux always:", err)
		return 1
	}
	if pos[0] == "list" {
		if err := writeRules(s.out, rules, asJSON); err != nil {
			fmt.Fprintln(s.err, "acpmux always:", err)
			return 1
		}
		return 0
	}
	rv, ok := st.(store.RuleRevoker)
	if !ok {
		fmt.Fprintln(s.err, "acpmux always: this store cannot revoke remembered verdicts")
		return 1
	}
	return revokeRules(ctx, rv, rules, pos[1:], all, s)
}

// revokeRules deletes the rules granted by the decisions ids (every rule
// when all) and returns the exit status.
func revokeRules(ctx context.Context, rv store.RuleRevoker, rules []store.Rule, ids []string, all bool, s stdio) int {
	byDecision := map[string]store.Rule{}
	for _, r := range rules {
		byDecision[r.DecisionID] = r
	}
	var revoke []store.Rule
	code := 0
	if all {
		revoke = rules
	}
	for _, id := range ids {
		r, ok := byDecision[id]
		if !ok {
			fmt.Fprintf(s.err, "acpmux always: decision %s granted no remembered verdict (acpmux always list shows them)\n", id)
			code = 1
			continue
		}
		revoke = append(revoke, r)
	}
	for _, r := range revoke {
		gone, err := rv.DeleteRule(ctx, r.Key, r.DecisionID)
		if err != nil {
			fmt.Fprintln(s.err, "acpmux always:", err)
			return 1
		}
		if !gone { // revoked, or replaced by a later grant, since the list was read
			fmt.Fprintf(s.err, "acpmux always: decision %s's verdict was revoked or replaced meanwhile; run acpmux always list\n", r.DecisionID)
			code = 1
			continue
		}
		fmt.Fprintf(s.err, "acpmux always: revoked %s of %s %q (decision %s)\n", r.Decision, r.Kind, r.Target, r.DecisionID)
	}
	if all && len(rules) == 0 {
		fmt.Fprintln(s.err, "acpmux always: no remembered verdicts")
	}
	return code
}

// writeRules prints rules as a table, or as a JSON array (each
// store.Rule's JSON) when asJSON.
func writeRules(w io.Writer, rules []store.Rule, asJSON bool) error {
	if asJSON {
		if rules == nil {
			rules = []store.Rule{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rules)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DECISION\tVERDICT\tKIND\tTARGET\tAGENT\tBY\tCREATED")
	for _, r := range rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%q\t%s\t%s\t%s\n", r.DecisionID, r.Decision, r.Kind, r.Target, r.Agent, r.By,
			r.CreatedAt.Local().Format(time.DateTime))
	}
	return tw.Flush()
}
