package main

import (
	"context"
	"sync"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// tokenRefreshEvery is how often at most a miss re-reads the hashes of
// the per-person tokens (a token added by acpmux token add while acpmux
// runs is redacted from the first message that uses it after that).
var tokenRefreshEvery = 3 * time.Second

// personTokens recognises the per-person tokens of a store (acpmux token
// add; docs/tokens.md) in a --record transcript: the store keeps only
// their SHA-256 hashes, so a token-shaped candidate is hashed and looked
// up in a cached set of them, re-read on a miss at most every
// tokenRefreshEvery.
type personTokens struct {
	people store.People
	now    func() time.Time

	mu     sync.Mutex
	hashes map[string]bool
	read   time.Time // when hashes were read; zero: never
}

// isToken implements bridge.RecorderOptions.IsToken.
func (p *personTokens) isToken(candidate string) bool {
	sum := store.TokenSHA256(candidate)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hashes[sum] {
		return true
	}
	if !p.read.IsZero() && p.now().Sub(p.read) < tokenRefreshEvery {
		return false
	}
	p.read = p.now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	toks, err := p.people.Tokens(ctx)
	if err != nil {
		return false // the hashes read before stay
	}
	p.hashes = make(map[string]bool, len(toks))
	for _, t := range toks {
		p.hashes[t.SHA256] = true
	}
	return p.hashes[sum]
}
