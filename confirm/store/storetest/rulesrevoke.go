package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// rulesRevoke: HasRule finds a stored ALWAYS verdict by key and the
// decision that granted it (not a replaced grant of the same key), and
// DeleteRule removes it, once.
func rulesRevoke(t *testing.T, s store.Store) {
	rv, ok := s.(store.RuleRevoker)
	if !ok {
		t.Skip("the store cannot revoke ALWAYS verdicts")
	}
	ctx := context.Background()
	at := time.Now().UTC()
	for _, r := range []store.Rule{
		{Key: "k1", Agent: "a", Kind: "execute", Target: "make", Decision: "allow", DecisionID: "d1", By: "ide", CreatedAt: at},
		{Key: "k1", Agent: "a", Kind: "execute", Target: "make", Decision: "allow", DecisionID: "d2", By: "ide", CreatedAt: at.Add(time.Second)},
		{Key: "k2", Agent: "a", Kind: "edit", Target: "x", Decision: "deny", DecisionID: "d3", By: "ide", CreatedAt: at},
	} {
		if err := s.InsertRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		key, decision string
		want          bool
	}{{"k1", "d2", true}, {"k1", "d1", false}, {"k2", "d3", true}, {"k3", "d3", false}} {
		if got, err := rv.HasRule(ctx, c.key, c.decision); err != nil || got != c.want {
			t.Errorf("HasRule(%s, %s) = %v, %v; want %v", c.key, c.decision, got, err, c.want)
		}
	}
	if gone, err := rv.DeleteRule(ctx, "k1"); err != nil || !gone {
		t.Fatalf("DeleteRule(k1) = %v, %v; want true", gone, err)
	}
	if gone, err := rv.DeleteRule(ctx, "k1"); err != nil || gone {
		t.Fatalf("DeleteRule(k1) again = %v, %v; want false", gone, err)
	}
	if got, err := rv.HasRule(ctx, "k1", "d2"); err != nil || got {
		t.Errorf("HasRule(k1, d2) after DeleteRule = %v, %v; want false", got, err)
	}
	if rs, err := s.Rules(ctx); err != nil || len(rs) != 1 || rs[0].Key != "k2" {
		t.Errorf("rules after DeleteRule(k1): %+v, %v; want only k2", rs, err)
	}
}
