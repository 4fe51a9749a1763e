package confirm_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// An ALWAYS allow revoked in the store (acpmux always revoke, from another
// process) stops applying at once in a broker that remembered it: the next
// matching request is asked again, not allowed.
func TestRevokedAlwaysVerdictIsAskedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := newBroker(t, confirm.Options{Store: st, Classify: classifyCmd})
	ide := newHost("ide")
	ch := ask(b, toolReq("s", "1", "execute", "make test"), ide)
	d := ide.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeAlways}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	r := await(t, ask(b, toolReq("s", "2", "execute", "make test"), newHost("ide")))
	if opt, _ := outcome(t, r.result); opt != "allow-once" {
		t.Fatalf("with the ALWAYS allow stored: %s, want allow-once without asking", opt)
	}

	other, err := sqlite.Open(path) // another process's store
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	rules, err := other.Rules(context.Background())
	if err != nil || len(rules) != 1 {
		t.Fatalf("rules %v, %v", rules, err)
	}
	if gone, err := store.RuleRevoker(other).DeleteRule(context.Background(), rules[0].Key, rules[0].DecisionID); err != nil || !gone {
		t.Fatalf("DeleteRule: %v %v", gone, err)
	}

	ide3 := newHost("ide")
	ch3 := ask(b, toolReq("s", "3", "execute", "make test"), ide3)
	d3 := ide3.wait(t) // presented: asked again
	if d3.ID() != confirm.DecisionID("s", "3") {
		t.Fatalf("presented %s", d3.ID())
	}
	if _, _, err := b.Answer(context.Background(), "s", d3.ID(), "http", confirm.Answer{OptionID: "reject-once"}); err != nil {
		t.Fatal(err)
	}
	if opt, _ := outcome(t, await(t, ch3).result); opt != "reject-once" {
		t.Errorf("after the revoke: %s, want the human's reject-once", opt)
	}
}
