package confirm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"

	"github.com/acpmux/acpmux/acp"
)

// checkScope validates a.Scope for d. It must not take d.mu (the caller
// holds it).
func (b *Broker) checkScope(d *Decision, a Answer) error {
	switch a.Scope {
	case "", policy.ScopeOnce:
		return nil
	case policy.ScopeSession, policy.ScopeAlways:
	default:
		return fmt.Errorf("%w: %w: unknown scope %q (want ONCE, SESSION or ALWAYS)", ErrInvalidAnswer, policy.ErrScopeRefused, a.Scope)
	}
	if d.OneOff() {
		return fmt.Errorf("%w: %w: an exact one-off plan-mode approval cannot be %s", ErrInvalidAnswer, policy.ErrScopeRefused, a.Scope)
	}
	if a.Scope == policy.ScopeAlways {
		if b.store == nil || !b.store.Durable() {
			return fmt.Errorf("%w: %w", ErrInvalidAnswer, policy.ErrAlwaysUnavailable)
		}
	}
	return nil
}

// scopeOf reads _meta.acpmux.scope from an ACP host's result (the result's
// own _meta, else the outcome's); "" when absent.
func scopeOf(result json.RawMessage) (policy.Scope, error) {
	for _, obj := range [][]byte{result, acp.MemberBytes(result, "outcome")} {
		raw := acp.MemberBytes(acp.MemberBytes(acp.MemberBytes(obj, "_meta"), "acpmux"), "scope")
		if raw == nil {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", fmt.Errorf("%w: _meta.acpmux.scope must be a string", ErrInvalidAnswer)
		}
		return policy.Scope(s), nil
	}
	return "", nil
}

// rememberKey is the key of SESSION and ALWAYS verdicts: agent, tool kind,
// and the command, or the title when there is no command.
func rememberKey(it policy.Item) string {
	target := it.Command
	if target == "" {
		// No command: the title and the whole input (arguments, diff,
		// locations), so that a grant for one call never covers another
		// call of the same tool with other arguments.
		target = it.Title + "\x00" + it.InputSHA256
	}
	return it.Agent + "\x00" + it.Kind + "\x00" + target
}

// remember applies the scope of the winning answer of d: SESSION in
// memory, ALWAYS in the store and then in memory.
func (b *Broker) remember(d *Decision, a *Answer, by string) {
	if a == nil || (a.Scope != policy.ScopeSession && a.Scope != policy.ScopeAlways) || d.snap.Gate == nil {
		return
	}
	verdict := policy.DecisionDeny
	for _, o := range d.snap.Options {
		if o.OptionID == a.OptionID && mayApprove(o) {
			verdict = policy.DecisionAllow
		}
	}
	key := d.snap.Gate.Key
	if a.Scope == policy.ScopeSession {
		b.g.mu.Lock()
		b.gateSessionLocked(d.snap.SessionID).remember[key] = verdict
		b.g.mu.Unlock()
		return
	}
	it := b.itemOf(&d.snap, d.snap.Gate.Mode)
	target := it.Command
	if target == "" {
		target = it.Title
	}
	r := store.Rule{Key: key, Agent: it.Agent, Kind: it.Kind, Target: target, Decision: verdict,
		DecisionID: d.id, By: by, CreatedAt: b.now().UTC()}
	if b.store != nil {
		if err := b.store.InsertRule(context.Background(), r); err != nil {
			b.log.Error("confirm: cannot store ALWAYS verdict", "decision", d.id, "err", err)
			return
		}
	}
	b.g.mu.Lock()
	b.g.always[key] = r
	b.g.mu.Unlock()
}

// loadAlways reads the stored ALWAYS verdicts once.
func (b *Broker) loadAlways() {
	b.g.mu.Lock()
	loaded := b.g.loaded
	b.g.loaded = true
	b.g.mu.Unlock()
	if loaded || b.store == nil {
		return
	}
	rules, err := b.store.Rules(context.Background())
	if err != nil {
		b.log.Warn("confirm: cannot read stored ALWAYS verdicts", "err", err)
		return
	}
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	for _, r := range rules {
		if _, ok := b.g.always[r.Key]; !ok {
			b.g.always[r.Key] = r
		}
	}
}

// alwaysStillStored reports whether r, a remembered ALWAYS verdict, still
// applies: the store still holds it (acpmux always revoke deletes it, from
// any process sharing the store; docs/policy.md "Revoking an ALWAYS
// verdict"). A verdict the store no longer holds is forgotten. When the
// store cannot say (an error, or no answer within alwaysCheckTimeout), an
// allow does not apply (the request is asked) and a deny still does: a
// store failure never approves.
func (b *Broker) alwaysStillStored(r store.Rule) bool {
	rv, ok := b.store.(store.RuleRevoker)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), alwaysCheckTimeout)
	defer cancel()
	has, err := rv.HasRule(ctx, r.Key, r.DecisionID)
	if err != nil {
		b.log.Warn("confirm: cannot check a stored ALWAYS verdict; an allow is asked again", "decision", r.DecisionID, "verdict", r.Decision, "err", err)
		return r.Decision == policy.DecisionDeny
	}
	if !has {
		b.g.mu.Lock()
		if cur, ok := b.g.always[r.Key]; ok && cur.DecisionID == r.DecisionID {
			delete(b.g.always, r.Key)
		}
		b.g.mu.Unlock()
	}
	return has
}

// alwaysCheckTimeout bounds alwaysStillStored's read of the store.
const alwaysCheckTimeout = 5 * time.Second
