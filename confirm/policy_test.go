package confirm_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm"
)

// emptyMatchers are the matcher keys of a rule; each with an empty array
// is a malformed policy.
var emptyMatchers = []string{"command", "kind", "path", "title", "agent", "class", "mode"}

// TestPolicyEmptyArrayMatcherIsMalformed: an empty array in any matcher is
// refused, and the error names the key, the rule (number and name) and the
// line of its [[rule]] header. Before, such a rule matched everything, so
// an allow rule with kind = [] auto-allowed edits.
func TestPolicyEmptyArrayMatcherIsMalformed(t *testing.T) {
	for _, key := range emptyMatchers {
		t.Run(key, func(t *testing.T) {
			src := "# policy\n[[rule]]\nname = 'ok'\ndecision = 'deny'\ncommand = 'rm *'\n\n" +
				"[[rule]]  # the bad one\nname = 'allow-all'\ndecision = 'allow'\n" + key + " = []\n"
			_, err := confirm.ParsePolicy([]byte(src))
			if !errors.Is(err, confirm.ErrPolicy) {
				t.Fatalf("err = %v, want ErrPolicy", err)
			}
			for _, want := range []string{`rule 2 ("allow-all", line 7)`, key + " = []"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

// TestPolicyEmptyArrayNeverMatches: a rule whose matcher is an empty array
// (possible only when built in code, as ParsePolicy refuses it) matches
// nothing rather than everything.
func TestPolicyEmptyArrayNeverMatches(t *testing.T) {
	for _, key := range emptyMatchers {
		t.Run(key, func(t *testing.T) {
			val := map[string]string{"kind": "edit", "class": "read-only", "mode": "plan"}[key]
			if val == "" {
				val = "x"
			}
			p, err := confirm.ParsePolicy([]byte("[[rule]]\nname='r'\ndecision='allow'\n" + key + "='" + val + "'"))
			if err != nil {
				t.Fatal(err)
			}
			r := &p.Rules[0]
			for _, l := range []*[]string{(*[]string)(&r.Command), (*[]string)(&r.Kind), (*[]string)(&r.Path), (*[]string)(&r.Title), (*[]string)(&r.Agent), (*[]string)(&r.Class), (*[]string)(&r.Mode)} {
				if *l != nil {
					*l = (*l)[:0]
				}
			}
			it := confirm.Item{Kind: "edit", Title: "Edit a.go", Mode: confirm.ModeDefault, Paths: []string{"/w/a.go"}, Agent: "agent"}
			if v := p.Evaluate(it); v.Decision != "" {
				t.Errorf("Evaluate = %+v, want no match", v)
			}
		})
	}
}

// TestPolicyErrorLineSkipsMultilineStrings: the line of a rule is that of
// its [[rule]] header, not of "[[rule]]" text inside a multi-line string.
func TestPolicyErrorLineSkipsMultilineStrings(t *testing.T) {
	for _, q := range []string{`"""`, "'''"} {
		// Line 6 holds an escaped quote (literal text in ''') and the close.
		src := "[[rule]]\nname = 'a'\ndecision = 'deny'\ntitle = " + q + "\n[[rule]]\nx \\\" " + q + "\n\n [[ \"rule\" ]]\nname = 'b'\ndecision = 'perhaps'\n"
		_, err := confirm.ParsePolicy([]byte(src))
		if err == nil || !strings.Contains(err.Error(), `rule 2 ("b", line 8)`) {
			t.Errorf("%s: err = %v, want rule 2 at line 8\n%s", q, err, src)
		}
	}
	_, err := confirm.ParsePolicy([]byte("rule = [{name = 'a', decision = 'allow', kind = []}]"))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rule 1 (%q): kind = []", "a")) {
		t.Errorf("inline rule: err = %v, want it refused without a line", err)
	}
}
