package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/store"
)

// chainBuilder appends chained rows as a store writes them.
type chainBuilder struct {
	rows []store.ChainRow
	prev string
}

func (b *chainBuilder) add(table, key string, c []byte) store.ChainRow {
	h := store.ChainHash(b.prev, c)
	r := store.ChainRow{Table: table, Key: key, Seq: int64(len(b.rows) + 1), Prev: b.prev, Hash: h, Content: c}
	b.rows = append(b.rows, r)
	b.prev = h
	return r
}

func (b *chainBuilder) event(e store.PruneEvent) store.ChainRow {
	return b.add(store.ChainPruneEvents, e.Kind, store.PruneEventContent(e, 1, 1))
}

func (b *chainBuilder) head() store.ChainHead {
	return store.ChainHead{Seq: int64(len(b.rows)), Hash: b.prev}
}

// placeholder is the chain_pruned row a prune by event id leaves for r.
func placeholder(r store.ChainRow, id int64, decision string) store.ChainRow {
	return store.ChainRow{Table: r.Table, Key: r.Key, Seq: r.Seq, Prev: r.Prev, Hash: r.Hash, Pruned: true, PruneID: id, Decision: decision}
}

func digest(rs ...store.ChainRow) string {
	var ps []store.Placeholder
	for _, r := range rs {
		ps = append(ps, store.Placeholder{Lane: r.Lane, Seq: r.Seq, Table: r.Table, Decision: r.Decision, Hash: r.Hash})
	}
	return store.PlaceholdersDigest(ps)
}

// chainOf builds the anchor (id 1, covering nothing) at position 1 and n
// chained journal rows of decision "d" after it.
func chainOf(n int) (*chainBuilder, []store.ChainRow) {
	b := &chainBuilder{}
	b.event(store.PruneEvent{ID: 1, Kind: store.PruneKindAnchor, PlaceholdersSHA256: digest(), Legacy: map[string]int64{}})
	var rows []store.ChainRow
	for i := 1; i <= n; i++ {
		rows = append(rows, b.add(store.ChainDecisionEvents, "d", store.ChainContent(store.ChainDecisionEvents, "d", int64(i))))
	}
	return b, rows
}

// TestVerifyChainAcrossPrunedPlaceholders: rows retention replaced by
// placeholders (position, previous hash, hash; no content) keep the chain
// unbroken when the chained prune event after them recorded exactly them;
// a placeholder that does not fit its place, or a row removed with no
// placeholder, is still a break.
func TestVerifyChainAcrossPrunedPlaceholders(t *testing.T) {
	b, rows := chainOf(5)
	p1, p2 := placeholder(rows[0], 2, "gone"), placeholder(rows[1], 2, "gone")
	b.event(store.PruneEvent{ID: 2, Kind: store.PruneKindPrune, Placeholders: 2, PlaceholdersSHA256: digest(p1, p2), Legacy: map[string]int64{}})
	all := b.rows
	head := b.head()
	with := func(repl map[int]store.ChainRow) []store.ChainRow { // all, with the rows at these indexes replaced
		out := append([]store.ChainRow{}, all...)
		for i, r := range repl {
			out[i] = r
		}
		return out
	}
	ok := with(map[int]store.ChainRow{1: p1, 2: p2})
	if n, err := store.VerifyChain(head, ok); err != nil || n != 7 {
		t.Fatalf("placeholders for two journal rows: %d, %v; want 7, nil", n, err)
	}

	var ce *store.ChainError
	bad := p1
	bad.Hash = strings.Repeat("0", 64) // a made-up placeholder
	_, err := store.VerifyChain(head, with(map[int]store.ChainRow{1: bad}))
	if !errors.As(err, &ce) || ce.Seq != 2 {
		t.Errorf("a placeholder with a made-up hash: %v, want a break at position 2", err)
	}
	_, err = store.VerifyChain(head, append(append([]store.ChainRow{}, all[:3]...), all[4:]...))
	if !errors.As(err, &ce) || ce.Seq != 4 || !strings.Contains(ce.Problem, "removed") {
		t.Errorf("a row removed without a placeholder: %v, want removed at 4", err)
	}
	_, err = store.VerifyChain(head, append(ok, all[1]))
	if !errors.As(err, &ce) || ce.Seq != 2 {
		t.Errorf("a placeholder beside its live row: %v, want inserted at 2", err)
	}
}

// TestVerifyChainRefusesPlaceholdersNoPruneVouchesFor: a row deleted and
// "dressed up" as pruned (its position and hashes copied into a
// placeholder) is reported as removed unless a chained prune event after
// it recorded exactly it, for the journal of a decision that is gone.
func TestVerifyChainRefusesPlaceholdersNoPruneVouchesFor(t *testing.T) {
	// vouched builds the anchor, five journal rows and a prune event (id
	// 2) that recorded p(rows[2]) as its one placeholder, and returns
	// the rows with the one at position 4 replaced by its placeholder and
	// extra placeholders put in at the positions they name.
	vouched := func(p func(store.ChainRow) store.ChainRow, extra ...func([]store.ChainRow) store.ChainRow) (store.ChainHead, []store.ChainRow) {
		b, rows := chainOf(5)
		ph := p(rows[2])
		b.event(store.PruneEvent{ID: 2, Kind: store.PruneKindPrune, Placeholders: 1, PlaceholdersSHA256: digest(ph), Legacy: map[string]int64{}})
		out := append([]store.ChainRow{}, b.rows...)
		out[3] = ph
		for _, x := range extra {
			e := x(rows)
			out[e.Seq-1] = e
		}
		return b.head(), out
	}
	gone := func(r store.ChainRow) store.ChainRow { return placeholder(r, 2, "gone") }
	if _, err := func() (int64, error) { h, r := vouched(gone); return store.VerifyChain(h, r) }(); err != nil {
		t.Fatalf("a placeholder its prune recorded: %v", err)
	}
	for _, tc := range []struct {
		name    string
		p       func(store.ChainRow) store.ChainRow
		extra   func([]store.ChainRow) store.ChainRow
		seq     int64
		problem string
	}{
		{"NoSuchPruneEvent", gone, func(rows []store.ChainRow) store.ChainRow { return placeholder(rows[0], 9, "gone") }, 2, "not in the chain"},
		{"NotRecordedByItsPrune", gone, func(rows []store.ChainRow) store.ChainRow { return placeholder(rows[0], 2, "gone") }, 2, "not one of the placeholders"},
		{"NamesTheAnchorBeforeIt", gone, func(rows []store.ChainRow) store.ChainRow { return placeholder(rows[0], 1, "gone") }, 2, "before the row"},
		{"NotAJournalRow", func(r store.ChainRow) store.ChainRow { p := gone(r); p.Table = store.ChainPlanItems; return p }, nil, 4, "retention prunes only the journal"},
		{"DecisionStillStored", func(r store.ChainRow) store.ChainRow { p := gone(r); p.DecisionExists = true; return p }, nil, 4, "still in the store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var extra []func([]store.ChainRow) store.ChainRow
			if tc.extra != nil {
				extra = append(extra, tc.extra)
			}
			head, rows := vouched(tc.p, extra...)
			var ce *store.ChainError
			_, err := store.VerifyChain(head, rows)
			if !errors.As(err, &ce) || ce.Seq != tc.seq || !strings.Contains(ce.Problem, "pruned placeholder") || !strings.Contains(ce.Problem, tc.problem) {
				t.Fatalf("verify: %v; want a break at %d: %q", err, tc.seq, tc.problem)
			}
		})
	}
}

// TestVerifyChainCountsLegacyRowsAgainstTheAnchor: the rows without a hash
// must number the chained anchor's count less what chained prunes deleted;
// the head row's own counts are not trusted.
func TestVerifyChainCountsLegacyRowsAgainstTheAnchor(t *testing.T) {
	b := &chainBuilder{}
	b.event(store.PruneEvent{ID: 1, Kind: store.PruneKindAnchor, PlaceholdersSHA256: digest(), Legacy: map[string]int64{store.ChainDecisionEvents: 3}})
	b.event(store.PruneEvent{ID: 2, Kind: store.PruneKindPrune, PlaceholdersSHA256: digest(), Legacy: map[string]int64{store.ChainDecisionEvents: 1}})
	head := b.head()
	legacy := store.ChainRow{Table: store.ChainDecisionEvents, Key: "old"}
	if _, err := store.VerifyChain(head, append(append([]store.ChainRow{}, b.rows...), legacy, legacy)); err != nil {
		t.Fatalf("3 legacy rows less 1 pruned, 2 left: %v", err)
	}
	head.Legacy = map[string]int64{store.ChainDecisionEvents: 3} // the head row bumped along with an inserted row
	var ce *store.ChainError
	_, err := store.VerifyChain(head, append(append([]store.ChainRow{}, b.rows...), legacy, legacy, legacy))
	if !errors.As(err, &ce) || !strings.Contains(ce.Problem, "inserted without a chain hash") {
		t.Errorf("a third legacy row: %v, want inserted without a chain hash", err)
	}
	_, err = store.VerifyChain(head, append(append([]store.ChainRow{}, b.rows...), legacy))
	if !errors.As(err, &ce) || !strings.Contains(ce.Problem, "were removed") {
		t.Errorf("one legacy row: %v, want removed", err)
	}
	_, err = store.VerifyChain(head, b.rows[1:])
	if !errors.As(err, &ce) || !strings.Contains(ce.Problem, "chain anchors") {
		t.Errorf("no anchor: %v, want refused", err)
	}
}
