package policy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/policy"
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
			_, err := policy.Parse([]byte(src))
			if !errors.Is(err, policy.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
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
// (possible only when built in code, as Parse refuses it) matches
// nothing rather than everything.
func TestPolicyEmptyArrayNeverMatches(t *testing.T) {
	for _, key := range emptyMatchers {
		t.Run(key, func(t *testing.T) {
			val := map[string]string{"kind": "edit", "class": "read-only", "mode": "plan"}[key]
			if val == "" {
				val = "x"
			}
			p, err := policy.Parse([]byte("[[rule]]\nname='r'\ndecision='allow'\n" + key + "='" + val + "'"))
			if err != nil {
				t.Fatal(err)
			}
			r := &p.Rules[0]
			for _, l := range []*[]string{(*[]string)(&r.Command), (*[]string)(&r.Kind), (*[]string)(&r.Path), (*[]string)(&r.Title), (*[]string)(&r.Agent), (*[]string)(&r.Class), (*[]string)(&r.Mode)} {
				if *l != nil {
					*l = (*l)[:0]
				}
			}
			it := policy.Item{Kind: "edit", Title: "Edit a.go", Mode: "default", Paths: []string{"/w/a.go"}, Agent: "agent"}
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
		_, err := policy.Parse([]byte(src))
		if err == nil || !strings.Contains(err.Error(), `rule 2 ("b", line 8)`) {
			t.Errorf("%s: err = %v, want rule 2 at line 8\n%s", q, err, src)
		}
	}
	_, err := policy.Parse([]byte("rule = [{name = 'a', decision = 'allow', kind = []}]"))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rule 1 (%q): kind = []", "a")) {
		t.Errorf("inline rule: err = %v, want it refused without a line", err)
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct{ name, src string }{
		{"not toml", "[[rule]\nname="},
		{"unknown key", "[[rule]]\nname='a'\ndecision='deny'\ncomand='rm *'"},
		{"no name", "[[rule]]\ndecision='deny'"},
		{"duplicate name", "[[rule]]\nname='a'\ndecision='deny'\n[[rule]]\nname='a'\ndecision='allow'"},
		{"bad decision", "[[rule]]\nname='a'\ndecision='maybe'"},
		{"bad kind", "[[rule]]\nname='a'\ndecision='deny'\nkind='exec'"},
		{"bad class", "[[rule]]\nname='a'\ndecision='deny'\nclass='readonly'"},
		{"bad mode", "[[rule]]\nname='a'\ndecision='deny'\nmode='yolo'"},
		{"number matcher", "[[rule]]\nname='a'\ndecision='deny'\ncommand=3"},
		{"top-level key", "decision='deny'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := policy.Parse([]byte(tt.src)); !errors.Is(err, policy.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestPolicyPrecedence(t *testing.T) {
	p := mustPolicy(t, `
[[rule]]
name = "allow-git"
decision = "allow"
command = "git *"

[[rule]]
name = "ask-push"
decision = "ask"
command = ["git push*", "git remote *"]

[[rule]]
name = "deny-force"
decision = "deny"
command = "git push *--force*"

[[rule]]
name = "deny-etc"
decision = "deny"
kind = ["edit", "delete", "move"]
path = "/etc/**"

[[rule]]
name = "ask-plan-reads"
decision = "ask"
mode = "plan"
class = "read-only"
agent = "claude-agent-acp"
`)
	tests := []struct {
		name string
		it   policy.Item
		want policy.Verdict
	}{
		{"allow", policy.Item{Kind: "execute", Command: "git status"}, policy.Verdict{Decision: "allow", Rule: "allow-git"}},
		{"ask beats allow", policy.Item{Kind: "execute", Command: "git push origin"}, policy.Verdict{Decision: "ask", Rule: "ask-push"}},
		{"deny beats ask", policy.Item{Kind: "execute", Command: "git push origin --force"}, policy.Verdict{Decision: "deny", Rule: "deny-force"}},
		{"no match is ask", policy.Item{Kind: "execute", Command: "ls"}, policy.Verdict{}},
		{"path ** crosses /", policy.Item{Kind: "edit", Paths: []string{"/etc/ssh/sshd_config"}}, policy.Verdict{Decision: "deny", Rule: "deny-etc"}},
		{"kind must match", policy.Item{Kind: "read", Paths: []string{"/etc/passwd"}}, policy.Verdict{}},
		{"all matchers", policy.Item{Kind: "execute", Command: "ls", Class: "read-only", Mode: "plan", Agent: "claude-agent-acp"}, policy.Verdict{Decision: "ask", Rule: "ask-plan-reads"}},
		{"agent differs", policy.Item{Kind: "execute", Command: "ls", Class: "read-only", Mode: "plan", Agent: "gemini"}, policy.Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Evaluate(tt.it); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPolicyThroughBroker: deny and allow rules answer without a host and
// record decidedBy; no match presents the agent's prompt.

func mustPolicy(t *testing.T, src string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDeepNestingIsMalformedAtOnce: a policy file of deeply nested inline
// tables (the TOML decoder takes quadratic time on them: 20,000 levels ran
// for minutes) is refused before decoding, naming the line.
func TestDeepNestingIsMalformedAtOnce(t *testing.T) {
	d := 20000
	src := "[[rule]]\nname = \"x\"\ndecision = \"deny\"\nx = " + strings.Repeat("{a=", d) + "1" + strings.Repeat("}", d) + "\n"
	_, err := policy.Parse([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("Parse = %v, want an error naming line 4 and the nesting", err)
	}
	// Ordinary rules with arrays and strings holding brackets still parse.
	ok := "[[rule]]\nname = \"a\"\ndecision = \"ask\"\ncommand = [\"ls [x]\", \"cat {y}\"] # [[[\n"
	if _, err := policy.Parse([]byte(ok)); err != nil {
		t.Fatalf("Parse(ordinary rule) = %v", err)
	}
}

// TestPolicyUnknownKeyNamesTheRule: a misspelled key is refused with the
// rule's number, its name and the line of its [[rule]] header.
func TestPolicyUnknownKeyNamesTheRule(t *testing.T) {
	src := "[[rule]]\nname = 'ok'\ndecision = 'allow'\n\n[[rule]]\nname = 'no-rm'\ndecision = 'deny'\ncomand = 'rm *'\n"
	_, err := policy.Parse([]byte(src))
	if !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), `rule 2 ("no-rm", line 5): unknown key "comand"`) {
		t.Errorf("err = %v, want rule 2 (\"no-rm\", line 5): unknown key \"comand\"", err)
	}
	_, err = policy.Parse([]byte("decison = 'deny'\n"))
	if !errors.Is(err, policy.ErrInvalid) || !strings.Contains(err.Error(), `unknown key "decison"`) {
		t.Errorf("top-level key: err = %v, want unknown key \"decison\"", err)
	}
}
