package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/acpmux/acpmux/confirm/identity"
	"github.com/acpmux/acpmux/confirm/store"
)

// LegacyPerson is the person of the --token-file token (Options.Token):
// an admin, so that setups from before per-person tokens keep working
// (docs/tokens.md).
const LegacyPerson = "token-file"

// refusal is why a request is not authenticated: an error code and
// message of a 401 body.
type refusal struct{ code, msg string }

var (
	refuseMissing = &refusal{"unauthorized", "missing, malformed or wrong bearer token"}
	refuseUnknown = &refusal{"unknown_token", "no person has this token in the store this acpmux uses (acpmux token list with the same --state; an acpmux with --state :memory: knows none)"}
	refuseRevoked = &refusal{"token_revoked", "this token was revoked (acpmux token revoke)"}
	refuseExpired = &refusal{"token_expired", "this token has expired (acpmux token add gives a new one)"}
	refuseStore   = &refusal{"unauthorized", "the token store could not be read"}
)

// presentedToken returns the token of r: "Authorization: Bearer TOKEN"
// (one header, scheme case-insensitive), else the acpmux_token cookie,
// else a Sec-WebSocket-Protocol entry "acpmux.bearer.TOKEN" — never the
// query string, except for the one-time exchange of GET /?token=. ok is
// false when there is none or the header is malformed.
func presentedToken(r *http.Request) (tok string, ok bool) {
	if vals := r.Header.Values("Authorization"); len(vals) > 0 {
		if len(vals) != 1 {
			return "", false
		}
		scheme, tok, ok := strings.Cut(vals[0], " ")
		return strings.TrimSpace(tok), ok && strings.EqualFold(scheme, "Bearer")
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value, true
	}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if tok, ok := strings.CutPrefix(strings.TrimSpace(p), ProtocolTokenPrefix); ok {
				return tok, true
			}
		}
	}
	return "", false
}

// person returns who tok authenticates: the --token-file token (compared
// in constant time) is LegacyPerson, an admin; any other is looked up by
// its SHA-256 in Options.People and must be neither revoked nor expired.
// A token that is neither the --token-file token nor of the form
// issuedForm describes is malformed: refused as unauthorized, like a
// missing one, without a look-up.
func (g *guard) person(ctx context.Context, tok string) (identity.Person, *refusal) {
	if tok == "" {
		return identity.Person{}, refuseMissing
	}
	sum := sha256.Sum256([]byte(tok))
	if !g.noToken && subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) == 1 {
		return identity.Person{Name: LegacyPerson, Role: store.RoleAdmin}, nil
	}
	if g.people == nil || !issuedForm(tok) {
		return identity.Person{}, refuseMissing
	}
	t, err := g.people.TokenBySHA256(ctx, store.TokenSHA256(tok))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return identity.Person{}, refuseUnknown
	case err != nil:
		return identity.Person{}, refuseStore
	case !t.RevokedAt.IsZero():
		return identity.Person{}, refuseRevoked
	case !t.Active(time.Now()):
		return identity.Person{}, refuseExpired
	}
	return identity.Person{Name: t.Name, Role: t.Role}, nil
}

// issuedForm reports whether tok has the form of the per-person tokens
// that acpmux token add issues: 64 lowercase hexadecimal digits (256
// random bits). Any other text can only be the --token-file token.
func issuedForm(tok string) bool {
	if len(tok) != 64 {
		return false
	}
	for _, c := range []byte(tok) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// authenticate returns the person of r's token, or why there is none.
func (g *guard) authenticate(r *http.Request) (identity.Person, *refusal) {
	tok, ok := presentedToken(r)
	if !ok {
		return identity.Person{}, refuseMissing
	}
	return g.person(r.Context(), tok)
}

// RequirePrompt wraps h so that only a person whose role may prompt
// (controller, admin) reaches it; others get 403 forbidden_role. For routes
// that only drive the agent.
func RequirePrompt(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := identity.PersonFrom(r.Context()); !ok || !p.Role.MayPrompt() {
			writeError(w, http.StatusForbidden, "forbidden_role", "this token's role may not prompt the agent")
			return
		}
		h.ServeHTTP(w, r)
	})
}
