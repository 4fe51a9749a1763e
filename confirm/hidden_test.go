package confirm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/hidden"

	"github.com/acpmux/acpmux/confirm"
)

// TestHiddenCharactersWarnEveryHost: a command or title with hidden
// characters gets a warning naming them, in the snapshot every host is
// shown and in its displayed text.
func TestHiddenCharactersWarnEveryHost(t *testing.T) {
	tests := []struct {
		name, title, command string
		want                 []string
	}{
		{"command", "Run a command", "rm -rf build\u200b \u202egnp.txt",
			[]string{gate.WarningHiddenInCommand + "U+200B ZERO WIDTH SPACE, U+202E RIGHT-TO-LEFT OVERRIDE"}},
		{"title", "Delete\u1680build", "rm -rf build",
			[]string{gate.WarningHiddenInTitle + "U+1680 OGHAM SPACE MARK"}},
		{"both, shorthand and controls", "x\U0001bca0\U0001bca3", "echo a\rb\x1b[2K\U000110bd",
			[]string{gate.WarningHiddenInCommand + "U+000D, U+001B, U+110BD KAITHI NUMBER SIGN",
				gate.WarningHiddenInTitle + "U+1BCA0 SHORTHAND FORMAT LETTER OVERLAP, U+1BCA3 SHORTHAND FORMAT UP STEP"}},
		{"newline and tab are layout", "Run a script", "for f in *; do\n\techo \"$f\"\ndone", nil},
		{"plain", "Run a command", "ls -la", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBroker(t, confirm.Options{Classify: func(string) confirm.Classification { return confirm.Classification{Class: "read-only"} }})
			host := newHost("ide")
			tc, _ := json.Marshal(map[string]any{"toolCallId": "c1", "title": tt.title, "kind": "execute",
				"rawInput": map[string]string{"command": tt.command}})
			p := `{"sessionId":"s","toolCall":` + string(tc) + `,"options":[{"optionId":"y","name":"Yes","kind":"allow_once"},{"optionId":"n","name":"No","kind":"reject_once"}]}`
			ch := ask(b, confirm.Request{SessionID: "s", AgentKey: "k", Params: json.RawMessage(p), Cwd: "/repo"}, host)
			s := host.wait(t).Snapshot()
			if strings.Join(s.Warnings, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings\n got %q\nwant %q", s.Warnings, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(s.DisplayedText, "warning: "+w+"\n") {
					t.Errorf("displayed text lacks warning %q:\n%s", w, s.DisplayedText)
				}
			}
			if strings.ContainsFunc(strings.ReplaceAll(s.DisplayedText, "\n", ""), hidden.Rune) {
				t.Errorf("displayed text holds a hidden character raw: %q", s.DisplayedText)
			}
			b.CancelSession("s", "")
			await(t, ch)
		})
	}
}
