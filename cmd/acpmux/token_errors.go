package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/acpmux/acpmux/confirm/store"
)

// tokenArgsError says, for a person, what is wrong with the arguments
// args of token verb, followed by that verb's usage line.
func tokenArgsError(verb string, args []string) string {
	var msg string
	switch {
	case len(args) == 0:
		msg = verb + " needs a NAME"
	case verb == "list":
		msg = fmt.Sprintf("list takes no NAME, got %q", args[0])
	default:
		msg = fmt.Sprintf("%s takes one NAME, got %d: %s", verb, len(args), strings.Join(args, " "))
	}
	return msg + "\n" + tokenUsageLine(verb)
}

// tokenUsageLine is the line of tokenUsage for verb, without the
// "Usage:" prefix's indentation.
func tokenUsageLine(verb string) string {
	for _, l := range strings.Split(tokenUsage, "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(l, "Usage:"))
		if strings.HasPrefix(l, "acpmux token "+verb+" ") || l == "acpmux token "+verb {
			return "Usage: " + l
		}
	}
	return ""
}

// tokenStoreError is err of the store for token verb as one sentence for
// a person: the store's wording ("store revoke token: decision not found:
// ...") names internals.
func tokenStoreError(verb string, args []string, err error) error {
	switch {
	case verb == "add" && errors.Is(err, store.ErrExists):
		return fmt.Errorf("%s already has a token; revoke it first (acpmux token revoke %s)", args[0], args[0])
	case verb == "revoke" && errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("%s has no token to revoke (acpmux token list shows every token)", args[0])
	}
	return err
}
