package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestAnswerOfTheWrongKindNamesTheFlags: an answer of the wrong kind, an
// option for a question or an action for a permission request, is refused
// naming the CLI flags to use (--action, --field, --content; --option),
// not the API's JSON members.
func TestAnswerOfTheWrongKindNamesTheFlags(t *testing.T) {
	qbase, qtf, qid, _ := questionServer(t)
	code, _, errs := runDecisions("answer", qid, "--session", "sess_1", "--option", "allow", "--url", qbase, "--token-file", qtf)
	want := "acpmux decisions: decision " + qid + " is a question: answer it with --action accept, decline or cancel, and for accept --field NAME=VALUE (repeatable) or --content JSON"
	if code != 1 || !strings.HasPrefix(errs, want) {
		t.Errorf("--option on a question: exit %d, stderr %q; want 1, %q", code, errs, want)
	}
	base, tf, id, _ := decisionsServer(t)
	code, _, errs = runDecisions("answer", id, "--session", "sess_1", "--action", "accept", "--url", base, "--token-file", tf)
	want = "acpmux decisions: decision " + id + " is a permission request: answer it with --option"
	if code != 1 || !strings.HasPrefix(errs, want) {
		t.Errorf("--action on a permission request: exit %d, stderr %q; want 1, %q", code, errs, want)
	}
}

// TestDecisionsShowAlignsColumns: decisions show prints the offered
// options and the journal in aligned columns, with no trailing space.
func TestDecisionsShowAlignsColumns(t *testing.T) {
	base, tf, id, _ := decisionsServer(t)
	code, out, errs := runDecisions("show", id, "--session", "sess_1", "--url", base, "--token-file", tf)
	if code != 0 {
		t.Fatalf("show: %d %q", code, errs)
	}
	if m := regexp.MustCompile(`(?m)[ \t]+$`).FindString(out); m != "" {
		t.Errorf("a line ends in a space:\n%q", out)
	}
	options, journal := section(out, "options:"), section(out, "journal:")
	if len(options) < 2 || len(journal) < 2 {
		t.Fatalf("too few options or journal lines to compare:\n%s", out)
	}
	if strings.Index(options[0], "[") != strings.Index(options[1], "[") {
		t.Errorf("option kinds misaligned:\n%s", strings.Join(options, "\n"))
	}
	// The journal's columns: seq, time, type (as wide as "presented"), who
	// (as wide as "http", empty for the broker's own events), detail.
	want := []*regexp.Regexp{
		regexp.MustCompile(`^    1  \d\d:\d\d:\d\d\.\d{3}  opened {11}timeout 5m0s$`),
		regexp.MustCompile(`^    2  \d\d:\d\d:\d\d\.\d{3}  presented  http$`),
	}
	for i, re := range want {
		if !re.MatchString(journal[i]) {
			t.Errorf("journal line %d %q does not match %s", i+1, journal[i], re)
		}
	}
}

// section is the indented lines after the line header in out.
func section(out, header string) []string {
	var lines []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case l == header:
			in = true
		case in && strings.HasPrefix(l, "  "):
			lines = append(lines, l)
		case in:
			return lines
		}
	}
	return lines
}

// TestDecisionsHelpExampleUsesTheDemoOption: the help's answer example
// picks an optionId the demo offers (allow), not one nothing offers.
func TestDecisionsHelpExampleUsesTheDemoOption(t *testing.T) {
	_, out, _ := runDecisions("--help")
	if !strings.Contains(out, "--option allow\n") || strings.Contains(out, "allow-once") {
		t.Errorf("decisions --help example:\n%s", out)
	}
}

// TestPruneBeforeAnAgeHintsAtRetain: --before 30d (an age, not a date)
// is refused with a hint at --retain 30d.
func TestPruneBeforeAnAgeHintsAtRetain(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	code, _, errs := runCLI("prune", "--before", "30d", "--state", state)
	if code != 2 || !strings.Contains(errs, "for an age use --retain 30d") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestAttachRefusedTokenSaysWhereTokensComeFrom: a token acpmux refuses
// is reported as refused, naming the file, and where good tokens come from.
func TestAttachRefusedTokenSaysWhereTokensComeFrom(t *testing.T) {
	r := startRelayProcess(t, permAgentScript, "--state", ":memory:")
	bad := filepath.Join(t.TempDir(), "bad.tok")
	os.WriteFile(bad, []byte("not-the-token"), 0o600)
	code, _, errs := runCLI("attach", "--token-file", bad, r.apiURL)
	if code != 1 || !strings.Contains(errs, "refused the token in "+bad+" (HTTP 401)") || !strings.Contains(errs, "acpmux token add") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestAttachUnreachableSaysNoAcpmuxListens: attach to an address where
// nothing listens says so, and where the right URL is logged, instead of
// the WebSocket library's dial error.
func TestAttachUnreachableSaysNoAcpmuxListens(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(tok, []byte("some-token"), 0o600)
	code, _, errs := runCLI("attach", "--token-file", tok, "ws://127.0.0.1:1/acp")
	want := "acpmux attach: no acpmux is listening at ws://127.0.0.1:1/acp; acpmux run --listen logs its URL"
	if code != 1 || !strings.HasPrefix(errs, want) || strings.Contains(errs, "failed to WebSocket dial") {
		t.Errorf("exit %d, stderr %q, want %q", code, errs, want)
	}
}
