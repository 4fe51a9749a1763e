package policy_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/policy"
)

// TestApprovalOfMatchingAskRules: approvers intersect, the larger quorum
// wins, requester_may_approve = false holds; allow verdicts carry none.
func TestApprovalOfMatchingAskRules(t *testing.T) {
	p, err := policy.Parse([]byte(`
[[rule]]
name = "deploys"
decision = "ask"
command = "deploy *"
approvers = ["alice", "bob", "carol"]
quorum = 2

[[rule]]
name = "prod"
decision = "ask"
command = "* prod"
approvers = ["bob", "carol", "dave"]
requester_may_approve = false

[[rule]]
name = "status"
decision = "allow"
command = "git status"
class = "read-only"
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, command string
		want          *policy.Approval
	}{
		{"both", "deploy prod", &policy.Approval{Approvers: []string{"bob", "carol"}, Quorum: 2, NoSelfApproval: true}},
		{"one", "deploy staging", &policy.Approval{Approvers: []string{"alice", "bob", "carol"}, Quorum: 2}},
		{"allow", "git status", nil},
		{"none", "ls", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Evaluate(policy.Item{Kind: "execute", Command: tc.command, Class: "read-only"}).Approval
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("approval of %q: got %+v, want %+v", tc.command, got, tc.want)
			}
		})
	}
}

// TestApproversOnlyOnAskRules: approvers, quorum and
// requester_may_approve are refused on allow and deny rules, and bad
// values are refused.
func TestApproversOnlyOnAskRules(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`decision = "allow"` + "\napprovers = [\"a\"]", `need decision = "ask"`},
		{`decision = "deny"` + "\nquorum = 2", `need decision = "ask"`},
		{`decision = "ask"` + "\napprovers = []", "nobody could answer"},
		{`decision = "ask"` + "\napprovers = [\"a\", \"a\"]", "listed twice"},
		{`decision = "ask"` + "\napprovers = [\"a\"]\nquorum = 2", "more than the 1 approvers"},
		{`decision = "ask"` + "\nquorum = 99", "quorum 99"},
	} {
		_, err := policy.Parse([]byte("[[rule]]\nname = \"r\"\n" + tc.body + "\n"))
		if !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an ErrInvalid with %q", tc.body, err, tc.want)
		}
	}
}
