package httpapi

import (
	"errors"
	"strings"

	"github.com/acpmux/acpmux/confirm/question"
)

// UserMessage returns the one sentence a person should read for err: the
// message of the error body ("message") and of the CLI. A refused field of
// a question's answer ([*question.FieldError]) reads "FIELD: REASON" (or
// REASON for the body as a whole); any other error reads as its text
// without the prefixes that the errors it wraps contribute, so
// "invalid answer: jsonrpc2 error -32602: invalid params: optionId …"
// reads "optionId …". What those prefixes said stays machine-readable in
// the body's "code" (docs/decisions.md, "The HTTP API"). An error that is only
// a wrapped sentinel keeps its text. UserMessage(nil) is "".
func UserMessage(err error) string {
	if err == nil {
		return ""
	}
	if fe, ok := errors.AsType[*question.FieldError](err); ok {
		if fe.Field == "" {
			return fe.Reason
		}
		return fe.Field + ": " + fe.Reason
	}
	msg := err.Error()
	inner := wrappedErrors(err)
	for trimmed := true; trimmed; {
		trimmed = false
		for _, w := range inner {
			if rest, ok := strings.CutPrefix(msg, w.Error()+": "); ok && rest != "" {
				msg, trimmed = rest, true
			}
		}
	}
	return msg
}

// wrappedErrors returns every error err wraps (through Unwrap() error and
// Unwrap() []error), depth first, err itself excluded.
func wrappedErrors(err error) []error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			if w := u.Unwrap(); w != nil {
				out = append(out, w)
				walk(w)
			}
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				if w != nil {
					out = append(out, w)
					walk(w)
				}
			}
		}
	}
	walk(err)
	return out
}
