// Package identity carries who sent an answer or a prompt ([Person]) in a
// context.Context, from the bearer token that authenticated it to the
// broker (package confirm) that checks it (docs/tokens.md).
package identity

import (
	"context"

	"github.com/acpmux/acpmux/confirm/store"
)

// Person is who sent an answer or a prompt: the name and role of the
// bearer token it came with (docs/tokens.md). It is only ever taken from
// the authenticated token, never from a message (a "person" in _meta
// means nothing to acpmux).
type Person struct {
	Name string     `json:"name"`
	Role store.Role `json:"role"`
}

type personKey struct{}

// WithPerson returns ctx carrying p, for the broker's Answer,
// AnswerQuestion and AnswerResult (package confirm).
func WithPerson(ctx context.Context, p Person) context.Context {
	return context.WithValue(ctx, personKey{}, p)
}

// PersonFrom returns the person ctx carries, if any.
func PersonFrom(ctx context.Context) (Person, bool) {
	p, ok := ctx.Value(personKey{}).(Person)
	return p, ok
}
