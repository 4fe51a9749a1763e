package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm/store"
)

func init() {
	register(command{name: "token", summary: "add, list and revoke the bearer tokens of people (roles observer, approver, controller, admin)", run: tokenMain})
}

const tokenUsage = `Usage: acpmux token add NAME --role ROLE [--expires DURATION] [--state PATH|URL]
       acpmux token list [--json] [--state PATH|URL]
       acpmux token revoke NAME [--state PATH|URL]

Manages per-person bearer tokens in the decision store (docs/tokens.md).
"add" prints the new token once, alone on stdout; only its SHA-256 is
stored. Roles: observer (sees sessions and decisions), approver (also
answers), controller (also prompts and changes modes), admin (also manages
tokens). The token of --token-file keeps working as an admin token named
"token-file". A running acpmux sees added and revoked tokens at once.

Exit status: 0 success, 1 the store failed or NAME has no token to revoke
(or already has one), 2 usage error.

Flags:
`

// validPersonName limits person names to what reads well in a journal.
func validPersonName(name string) error {
	if name == "" || len(name) > 64 {
		return errors.New("a name is 1 to 64 characters")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@", r)) {
			return fmt.Errorf("name %q: use letters, digits and . _ - @", name)
		}
	}
	if name == httpapi.LegacyPerson {
		return fmt.Errorf("name %q is reserved (the journal names the --token-file token so): choose another", name)
	}
	return nil
}

func tokenMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	var state, role, expires string
	var asJSON bool
	fs.StringVar(&state, "state", "", "decision store: a SQLite file or a postgres:// URL (default $XDG_STATE_HOME/acpmux/state.db)")
	fs.StringVar(&role, "role", "", "add: observer, approver, controller or admin")
	fs.StringVar(&expires, "expires", "", "add: the token stops working after this long (30d, 12h, 90m); default never")
	fs.BoolVar(&asJSON, "json", false, "list: print a JSON array")
	help := func(w io.Writer) { fmt.Fprint(w, tokenUsage); writeFlags(w, fs) }
	if len(args) == 0 {
		fmt.Fprint(s.err, "acpmux token: missing subcommand (add, list or revoke)\nRun 'acpmux token --help' for usage.\n")
		return 2
	}
	verb, rest := args[0], args[1:]
	if verb == "-h" || verb == "--help" || verb == "help" {
		help(s.out)
		return 0
	}
	var positional []string
	parse := func() error { // flags may come before or after NAME
		for {
			if err := fs.Parse(rest); err != nil {
				return err
			}
			if fs.NArg() == 0 {
				return nil
			}
			positional, rest = append(positional, fs.Arg(0)), fs.Args()[1:]
		}
	}
	if done, code := parseArgs("token", fs, s, help, parse); done {
		return code
	}
	usage := func(msg string) int {
		fmt.Fprintf(s.err, "acpmux token: %s\nRun 'acpmux token --help' for usage.\n", msg)
		return 2
	}
	wantArgs := map[string]int{"add": 1, "list": 0, "revoke": 1}
	n, ok := wantArgs[verb]
	if !ok {
		return usage(fmt.Sprintf("unknown verb %q: want add, list or revoke", verb))
	}
	if len(positional) != n {
		return usage(tokenArgsError(verb, positional))
	}
	var add store.Token
	if verb == "add" {
		var err error
		if add, err = tokenToAdd(positional[0], role, expires); err != nil {
			return usage(err.Error())
		}
	}
	st, err := openStateOr(state, "") // state.go: :memory: holds nothing to read
	if err != nil {
		fmt.Fprintln(s.err, "acpmux token:", err)
		return 1
	}
	defer st.Close()
	people, ok := st.(store.People)
	if !ok {
		fmt.Fprintln(s.err, "acpmux token: this store keeps no tokens")
		return 1
	}
	ctx := context.Background()
	switch verb {
	case "add":
		err = tokenAdd(ctx, people, add, s)
	case "list":
		err = tokenList(ctx, people, asJSON, s)
	case "revoke":
		err = people.RevokeToken(ctx, positional[0], time.Now())
		if err == nil {
			fmt.Fprintf(s.err, "acpmux token: revoked the token of %s\n", positional[0])
		}
	}
	if err != nil {
		err = tokenStoreError(verb, positional, err) // token_errors.go
		fmt.Fprintln(s.err, "acpmux token:", err)
		return 1
	}
	return 0
}

// tokenToAdd checks the arguments of token add.
func tokenToAdd(name, role, expires string) (store.Token, error) {
	t := store.Token{Name: name, Role: store.Role(role), CreatedAt: time.Now().UTC()}
	if err := validPersonName(name); err != nil {
		return t, err
	}
	if !t.Role.Valid() {
		return t, fmt.Errorf("--role %q: want observer, approver, controller or admin", role)
	}
	if expires != "" {
		d, err := parseDays(expires)
		if err != nil || d <= 0 {
			return t, fmt.Errorf("--expires %q: want a positive duration such as 30d, 12h or 90m", expires)
		}
		t.ExpiresAt = t.CreatedAt.Add(d)
	}
	return t, nil
}

// parseDays is time.ParseDuration that also takes whole days ("30d").
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days > 100000 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// tokenAdd makes a 256-bit random token, stores its hash and prints it.
func tokenAdd(ctx context.Context, people store.People, t store.Token, s stdio) error {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	tok := hex.EncodeToString(raw[:])
	t.SHA256 = store.TokenSHA256(tok)
	if err := people.AddToken(ctx, t); err != nil {
		return err
	}
	fmt.Fprintln(s.out, tok)
	fmt.Fprintf(s.err, "acpmux token: added %s (%s); the token, printed on stdout, is shown only once: keep it now\n", t.Name, t.Role)
	return nil
}

func tokenList(ctx context.Context, people store.People, asJSON bool, s stdio) error {
	all, err := people.Tokens(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	now := time.Now()
	tw := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tCREATED\tEXPIRES\tSTATE")
	for _, t := range all {
		exp, st := "never", "active"
		if !t.ExpiresAt.IsZero() {
			exp = t.ExpiresAt.Local().Format(time.DateTime)
		}
		switch {
		case !t.RevokedAt.IsZero():
			st = "revoked " + t.RevokedAt.Local().Format(time.DateTime)
		case !t.Active(now):
			st = "expired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, t.Role, t.CreatedAt.Local().Format(time.DateTime), exp, st)
	}
	return tw.Flush()
}
