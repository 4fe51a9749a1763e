package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDecisionsCLINamesTheBridgesOfASharedSessionID: two bridges share a
// store and both agents chose session id s1. "acpmux decisions answer D
// --session s1" at the inbox is refused with a sentence that says to pass
// --bridge ID and lists both bridges (id, name, host), not that the
// decision is closed; with --bridge it is answered. "list" has a BRIDGE
// column, "show" a bridge line, and the usage lines name --bridge.
func TestDecisionsCLINamesTheBridgesOfASharedSessionID(t *testing.T) {
	state := filepath.Join(t.TempDir(), "shared.db")
	_, b1, _ := startHeadlessShared(t, state)
	_, b2, _ := startHeadlessShared(t, state)
	inbox := startInbox(t, state)
	d1 := openDecisionOf(t, inbox, b1, "s1")
	openDecisionOf(t, inbox, b2, "s1")
	conn := []string{"--url", inbox.url + "/?token=" + inbox.token}

	code, out, errs := runDecisions(append([]string{"answer", d1.ID, "--session", "s1", "--option", "allow"}, conn...)...)
	if code != 1 || strings.Contains(errs, "already closed") || !strings.Contains(errs, "pass --bridge ID") {
		t.Fatalf("answer without --bridge: %d %q %q", code, out, errs)
	}
	for _, b := range []string{b1, b2} {
		if !strings.Contains(errs, b+" (name web, host ") {
			t.Errorf("the refusal does not list bridge %s with its name and host:\n%s", b, errs)
		}
	}
	code, out, errs = runDecisions(append([]string{"answer", d1.ID, "--session", "s1", "--bridge", b1, "--option", "allow"}, conn...)...)
	if code != 0 || !strings.Contains(out, "answered") {
		t.Fatalf("answer with --bridge: %d %q %q", code, out, errs)
	}

	code, out, errs = runDecisions(append([]string{"list"}, conn...)...)
	if code != 0 || !strings.HasPrefix(out, "BRIDGE") || !strings.Contains(out, b1+" (name web") || !strings.Contains(out, b2+" (name web") {
		t.Fatalf("list in a shared store: %d\n%s%s", code, out, errs)
	}
	code, out, errs = runDecisions(append([]string{"show", d1.ID, "--session", "s1", "--bridge", b1}, conn...)...)
	if code != 0 || !strings.Contains(out, "\nbridge    "+b1+" (name web") {
		t.Fatalf("show in a shared store: %d\n%s%s", code, out, errs)
	}

	_, out, errs = runCLI("help", "decisions")
	for _, sub := range []string{"list", "show", "answer"} {
		found := false
		for _, l := range strings.Split(out+errs, "\n") {
			found = found || strings.HasPrefix(l, "  acpmux decisions "+sub) && strings.Contains(l, "--bridge ID")
		}
		if !found {
			t.Errorf("no usage line of decisions %s names --bridge:\n%s%s", sub, out, errs)
		}
	}
}
