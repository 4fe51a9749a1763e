package confirm_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm"
)

// TestRelayedSnapshotKeepsWarningsVerbatim: a request relayed from another
// bridge (a teammate) takes that bridge's title, command, classification
// and warnings verbatim, even where this broker would derive others (it
// has no classifier here), and gets the same displayed-text hash; details
// that hash differently open no decision.
func TestRelayedSnapshotKeepsWarningsVerbatim(t *testing.T) {
	teammate := newBroker(t, confirm.Options{Classify: func(string) confirm.Classification {
		return confirm.Classification{Class: "write", Reasons: []string{"writes"}}
	}})
	h := newHost("ide")
	ch := ask(teammate, req("s1", "k1"), h)
	src := h.wait(t).Snapshot()
	teammate.CancelSession("s1", "done")
	await(t, ch)
	if len(src.Warnings) == 0 {
		t.Fatal("the source decision has no warnings")
	}

	lead := newBroker(t, confirm.Options{})
	relayed := req("teammate:alice/s1", "k1")
	relayed.Relayed = &confirm.Relayed{Title: src.Title, Command: src.Command, Classification: src.Classification,
		Warnings: src.Warnings, DisplayedTextSHA256: src.DisplayedTextSHA256}
	lh := newHost("lead-ide")
	lch := ask(lead, relayed, lh)
	got := lh.wait(t).Snapshot()
	if !slices.Equal(got.Warnings, src.Warnings) || got.DisplayedTextSHA256 != src.DisplayedTextSHA256 || got.Classification.Class != "write" {
		t.Errorf("relayed snapshot: warnings %q hash %s class %+v; want %q %s write", got.Warnings, got.DisplayedTextSHA256, got.Classification, src.Warnings, src.DisplayedTextSHA256)
	}
	lead.CancelSession("teammate:alice/s1", "done")
	await(t, lch)

	forged := req("teammate:alice/s1", "k2")
	forged.Relayed = &confirm.Relayed{Title: src.Title, Command: src.Command, Warnings: nil, DisplayedTextSHA256: src.DisplayedTextSHA256}
	if r := await(t, ask(lead, forged, lh)); !errors.Is(r.err, acp.ErrInvalidParams) {
		t.Errorf("relayed details without their warnings: %s, %v; want an invalid-params error", r.result, r.err)
	}
}
