package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// Role is what a person's bearer token allows (docs/tokens.md): each role
// includes the ones before it.
type Role string

// The roles.
const (
	RoleObserver   Role = "observer"   // sees sessions and decisions; answers nothing, prompts nothing
	RoleApprover   Role = "approver"   // also answers decisions
	RoleController Role = "controller" // also prompts the agent and changes modes
	RoleAdmin      Role = "admin"      // also manages tokens
)

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleObserver, RoleApprover, RoleController, RoleAdmin:
		return true
	}
	return false
}

// MayAnswer reports whether r may answer decisions: approver, controller
// and admin.
func (r Role) MayAnswer() bool { return r == RoleApprover || r == RoleController || r == RoleAdmin }

// MayPrompt reports whether r may prompt the agent, create sessions and
// change modes: controller and admin.
func (r Role) MayPrompt() bool { return r == RoleController || r == RoleAdmin }

// MayManage reports whether r may manage tokens: admin.
func (r Role) MayManage() bool { return r == RoleAdmin }

// Token is one person's bearer token as stored: never the token itself,
// only its SHA-256. A person (Name) has at most one token that is not
// revoked. JSON in camelCase; zero times are omitted.
type Token struct {
	Name      string    `json:"name"`
	Role      Role      `json:"role"`
	SHA256    string    `json:"-"` // lowercase hex SHA-256 of the token
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"` // zero: never
	RevokedAt time.Time `json:"revokedAt,omitzero"` // zero: not revoked
}

// TokenSHA256 returns the lowercase hex SHA-256 of a bearer token: what
// the tokens table keeps and looks tokens up by.
func TokenSHA256(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Active reports whether t authenticates at time now: not revoked and not
// expired.
func (t Token) Active(now time.Time) bool {
	return t.RevokedAt.IsZero() && (t.ExpiresAt.IsZero() || now.Before(t.ExpiresAt))
}

// ErrExists is wrapped by [People.AddToken] when the person already has a
// token that is not revoked.
var ErrExists = errors.New("already exists")

// People is the tokens table of a store: per-person bearer tokens, kept
// hashed. Both stores implement it; safe for concurrent use, also by
// several processes sharing one database. Times keep nanoseconds and are
// returned in UTC.
type People interface {
	// AddToken stores t. A person with a token that is not revoked is an
	// error wrapping [ErrExists] (revoke it first); t.Role must be valid.
	AddToken(ctx context.Context, t Token) error
	// Tokens returns every stored token, revoked ones included, by
	// CreatedAt then Name; none is an empty result, not an error.
	Tokens(ctx context.Context) ([]Token, error)
	// TokenBySHA256 returns the token whose hash is sum (lowercase hex),
	// revoked or expired ones too (the caller tells them apart), or an
	// error wrapping [ErrNotFound].
	TokenBySHA256(ctx context.Context, sum string) (Token, error)
	// RevokeToken sets RevokedAt of name's token that is not revoked to
	// at; no such token is an error wrapping [ErrNotFound].
	RevokeToken(ctx context.Context, name string, at time.Time) error
}

// Vote is one person's vote on a decision that needs a quorum
// (docs/policy.md, "Quorum"): an offered optionId, bound to the hash of
// the decision's snapshot. JSON in camelCase.
type Vote struct {
	DecisionID     string    `json:"decisionId"`
	Person         string    `json:"person"`
	OptionID       string    `json:"optionId"`
	SnapshotSHA256 string    `json:"snapshotSha256"`
	At             time.Time `json:"at"`
}

// ErrDuplicateVote is wrapped by [Votes.CastVote] when the person already
// voted on the decision.
var ErrDuplicateVote = errors.New("this person already voted on this decision")

// Votes keeps the votes of quorum decisions durably, so that approvers
// answering through different processes are counted together.
type Votes interface {
	// CastVote stores v unless v.Person already voted on v.DecisionID
	// (then an error wrapping [ErrDuplicateVote], nothing stored). It
	// returns how many distinct persons' stored votes on the decision,
	// v included, have v's OptionID and SnapshotSHA256. Casts on one
	// decision are serialised (in every process sharing the database), so
	// of concurrent votes exactly one sees the count reach any given n.
	CastVote(ctx context.Context, v Vote) (int, error)
	// VotesOf returns the votes on decisionID by At then Person; none is
	// an empty result.
	VotesOf(ctx context.Context, decisionID string) ([]Vote, error)
}
