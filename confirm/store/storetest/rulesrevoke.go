package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// rulesRevoke: HasRule finds a stored ALWAYS verdict by key and the
// decision that granted it (not a replaced grant of the same key), and
// DeleteRule removes it, once, and only the grant of the decision it names. Keys are as confirm builds them: parts
// joined by NUL bytes, a target that may hold any character (a NUL, a
// "%"), which every store must keep exactly.
func rulesRevoke(t *testing.T, s store.Store) {
	rv, ok := s.(store.RuleRevoker)
	if !ok {
		t.Skip("the store cannot revoke ALWAYS verdicts")
	}
	ctx := context.Background()
	at := time.Now().UTC()
	k1, k2, k3 := "a\x00execute\x00make", "a\x00edit\x00x %00 y\x00z", "a\x00edit\x00x \x00 y\x00z"
	for _, r := range []store.Rule{
		{Key: k1, Agent: "a", Kind: "execute", Target: "make", Decision: "allow", DecisionID: "d1", By: "ide", CreatedAt: at},
		{Key: k1, Agent: "a", Kind: "execute", Target: "make", Decision: "allow", DecisionID: "d2", By: "ide", CreatedAt: at.Add(time.Second)},
		{Key: k2, Agent: "a", Kind: "edit", Target: "x %00 y\x00z", Decision: "deny", DecisionID: "d3", By: "ide", CreatedAt: at},
	} {
		if err := s.InsertRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		key, decision string
		want          bool
	}{{k1, "d2", true}, {k1, "d1", false}, {k2, "d3", true}, {k3, "d3", false}} {
		if got, err := rv.HasRule(ctx, c.key, c.decision); err != nil || got != c.want {
			t.Errorf("HasRule(%s, %s) = %v, %v; want %v", c.key, c.decision, got, err, c.want)
		}
	}
	if rs, err := s.Rules(ctx); err != nil || len(rs) != 2 || rs[0].Key != k2 || rs[0].Target != "x %00 y\x00z" || rs[1].Key != k1 {
		t.Fatalf("rules %q, %v; want k2 and k1 as stored", rs, err)
	}
	if gone, err := rv.DeleteRule(ctx, k1, "d1"); err != nil || gone {
		t.Fatalf("DeleteRule(k1, d1) = %v, %v; want false (k1 is d2's verdict now)", gone, err)
	}
	if gone, err := rv.DeleteRule(ctx, k3, "d3"); err != nil || gone {
		t.Fatalf("DeleteRule(k3, d3) = %v, %v; want false (no such key; k2 differs only in its escape)", gone, err)
	}
	if gone, err := rv.DeleteRule(ctx, k1, "d2"); err != nil || !gone {
		t.Fatalf("DeleteRule(k1, d2) = %v, %v; want true", gone, err)
	}
	if gone, err := rv.DeleteRule(ctx, k1, "d2"); err != nil || gone {
		t.Fatalf("DeleteRule(k1, d2) again = %v, %v; want false", gone, err)
	}
	if got, err := rv.HasRule(ctx, k1, "d2"); err != nil || got {
		t.Errorf("HasRule(k1, d2) after DeleteRule = %v, %v; want false", got, err)
	}
	if rs, err := s.Rules(ctx); err != nil || len(rs) != 1 || rs[0].Key != k2 {
		t.Errorf("rules after DeleteRule(k1): %q, %v; want only k2", rs, err)
	}
}
