package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/store"
)

// chainOf builds n chained journal rows, as a store writes them.
func chainOf(n int) (store.ChainHead, []store.ChainRow) {
	var rows []store.ChainRow
	prev := ""
	for i := 1; i <= n; i++ {
		c := store.ChainContent(store.ChainDecisionEvents, "d", int64(i))
		h := store.ChainHash(prev, c)
		rows = append(rows, store.ChainRow{Table: store.ChainDecisionEvents, Key: "d", Seq: int64(i), Prev: prev, Hash: h, Content: c})
		prev = h
	}
	return store.ChainHead{Seq: int64(n), Hash: prev}, rows
}

// TestVerifyChainAcrossPrunedPlaceholders: a row retention replaced by its
// placeholder (position, previous hash, hash; no content) keeps the chain
// unbroken, while a placeholder that does not fit its place, or a row
// removed with no placeholder, is still a break.
func TestVerifyChainAcrossPrunedPlaceholders(t *testing.T) {
	head, rows := chainOf(5)
	pruned := func(r store.ChainRow) store.ChainRow {
		return store.ChainRow{Table: r.Table, Key: r.Key, Seq: r.Seq, Prev: r.Prev, Hash: r.Hash, Pruned: true}
	}
	ok := append([]store.ChainRow{pruned(rows[0]), pruned(rows[1])}, rows[2:]...)
	if n, err := store.VerifyChain(head, ok); err != nil || n != 5 {
		t.Fatalf("placeholders for the first two rows: %d, %v; want 5, nil", n, err)
	}

	var ce *store.ChainError
	bad := pruned(rows[2])
	bad.Hash = strings.Repeat("0", 64) // a made-up placeholder
	_, err := store.VerifyChain(head, append(append([]store.ChainRow{}, rows[:2]...), append([]store.ChainRow{bad}, rows[3:]...)...))
	if !errors.As(err, &ce) || ce.Seq != 4 {
		t.Errorf("a placeholder with a hash the next row does not follow: %v, want a break at position 4", err)
	}
	_, err = store.VerifyChain(head, append(append([]store.ChainRow{}, rows[:2]...), rows[3:]...))
	if !errors.As(err, &ce) || ce.Seq != 3 || !strings.Contains(ce.Problem, "removed") {
		t.Errorf("a row removed without a placeholder: %v, want removed at 3", err)
	}
	_, err = store.VerifyChain(head, append([]store.ChainRow{pruned(rows[0])}, rows...))
	if !errors.As(err, &ce) || ce.Seq != 1 {
		t.Errorf("a placeholder beside its live row: %v, want inserted at 1", err)
	}
}
