package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/acpmux/acpmux/confirm/store"
)

const auditVerifyUsage = `Usage: acpmux audit verify [--state PATH|URL]

Walks the hash chain over the decision journal, the audit rows, mode
changes and quorum votes (docs/security.md, "Tamper-evident audit"), the
main chain and every lane (on PostgreSQL, each acpmux process chains its
journal and audit rows on a lane of its own), and reports the first row
that was changed, inserted or removed, or a lane that was removed. On
success it prints the number of rows checked, the number of lanes and one
head hash for all of them: keep that hash somewhere else to detect a
rewrite of the whole chain. A store that holds
no chain (not an acpmux store, or a SQLite file in WAL mode copied without
its -wal file) is refused; the store is never created.

Exit status: 0 the chain is whole, 1 it is broken or the store could not be
read, 2 usage error.

Flags:
`

func auditVerifyMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	var state string
	fs.StringVar(&state, "state", "", "decision store: a SQLite file or a postgres:// URL (default $XDG_STATE_HOME/acpmux/state.db)")
	help := func(w io.Writer) { fmt.Fprint(w, auditVerifyUsage); writeFlags(w, fs) }
	if done, code := parseArgs("audit verify", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "acpmux audit verify: unexpected argument %q\nRun 'acpmux audit verify --help' for usage.\n", fs.Arg(0))
		return 2
	}
	state, err := existingStore(state) // storecheck.go
	if errors.Is(err, errNotAStore) {
		fmt.Fprintf(s.err, "acpmux audit verify: no audit chain in this store (%s): %v\n", redactState(state), err)
		return 1
	}
	if err != nil {
		fmt.Fprintln(s.err, "acpmux audit verify:", err)
		return 1
	}
	st, err := openStateOr(state, "") // state.go: :memory: holds nothing to read
	if err != nil {
		fmt.Fprintln(s.err, "acpmux audit verify:", err)
		return 1
	}
	defer st.Close()
	chain, ok := st.(store.Chain)
	if !ok {
		fmt.Fprintln(s.err, "acpmux audit verify: this store keeps no hash chain")
		return 1
	}
	head, rows, err := chain.ChainState(context.Background())
	if err != nil {
		fmt.Fprintln(s.err, "acpmux audit verify:", err)
		return 1
	}
	n, err := store.VerifyChain(head, rows)
	var ce *store.ChainError
	if errors.As(err, &ce) {
		fmt.Fprintf(s.out, "BROKEN after %d good rows: %v\n", n, err)
		return 1
	}
	if err != nil {
		fmt.Fprintln(s.err, "acpmux audit verify:", err)
		return 1
	}
	legacy := int64(0)
	for _, c := range head.Legacy {
		legacy += c
	}
	fmt.Fprintf(s.out, "ok: %s chained (the main chain and %s), head %s", counted(n, "row"), counted(int64(len(head.Lanes)), "lane"), store.ChainHeadHash(head))
	if legacy > 0 {
		fmt.Fprintf(s.out, " (%d older rows from before the chain started carry no hash)", legacy)
	}
	fmt.Fprintln(s.out)
	return 0
}

// counted is n and noun, plural unless n is 1: "1 row", "2 rows", "0 lanes".
func counted(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
