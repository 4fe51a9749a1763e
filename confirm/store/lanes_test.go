package store_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/store"
)

// TestPlaceholdersDigestOfTheMainChainIsUnchanged: placeholders of lane 0
// give the digest prune events recorded before lanes (SHA-256 of the JSON
// array of [seq, table, decision, hash] by seq), so those events stay
// valid; a lane's placeholder carries its lane, so moving it to another
// lane changes the digest.
func TestPlaceholdersDigestOfTheMainChainIsUnchanged(t *testing.T) {
	ps := []store.Placeholder{{Seq: 7, Table: "decision_events", Decision: "d", Hash: "h7"}, {Seq: 3, Table: "decision_events", Decision: "d", Hash: "h3"}}
	sum := sha256.Sum256([]byte(`[[3,"decision_events","d","h3"],[7,"decision_events","d","h7"]]`))
	if got := store.PlaceholdersDigest(ps); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("digest of main-chain placeholders %s, want the pre-lane %x", got, sum)
	}
	moved := []store.Placeholder{ps[0], ps[1]}
	moved[1].Lane = 5
	if store.PlaceholdersDigest(moved) == store.PlaceholdersDigest(ps) {
		t.Fatal("a placeholder moved to lane 5 gives the same digest")
	}
}

// TestVerifyChainWalksALaneFromItsRegistration: a lane's rows chain from
// its registration's hash in the main chain; a pruned placeholder in a
// lane is covered by a prune event of the main chain; the head to keep is
// one hash over every head, and the main chain's hash alone without lanes.
func TestVerifyChainWalksALaneFromItsRegistration(t *testing.T) {
	b := &chainBuilder{}
	b.event(store.PruneEvent{ID: 1, Kind: store.PruneKindAnchor, PlaceholdersSHA256: digest(), Legacy: map[string]int64{}})
	if got := store.ChainHeadHash(b.head()); got != b.head().Hash {
		t.Fatalf("head to keep without lanes %s, want the main chain's %s", got, b.head().Hash)
	}
	reg := b.event(store.PruneEvent{ID: 2, Kind: store.PruneKindLane, PlaceholdersSHA256: digest(), Legacy: map[string]int64{}})
	lane := &chainBuilder{prev: reg.Hash}
	var laneRows []store.ChainRow
	for _, k := range []string{"a", "b", "c"} {
		r := lane.add(store.ChainDecisionEvents, k, store.ChainContent(store.ChainDecisionEvents, "gone", k))
		r.Lane = 2
		laneRows = append(laneRows, r)
	}
	ph := placeholder(laneRows[0], 3, "gone")
	ph.Lane = 2
	b.event(store.PruneEvent{ID: 3, Kind: store.PruneKindPrune, Placeholders: 1, PlaceholdersSHA256: digest(ph), Legacy: map[string]int64{}})
	head := b.head()
	head.Lanes = []store.LaneHead{{Lane: 2, Seq: 3, Hash: lane.prev}}
	rows := append(append([]store.ChainRow{}, b.rows...), ph, laneRows[1], laneRows[2])
	if n, err := store.VerifyChain(head, rows); err != nil || n != 3+3 {
		t.Fatalf("a lane with a pruned first row: %d, %v; want 6, nil", n, err)
	}
	if got := store.ChainHeadHash(head); got == head.Hash || len(got) != 64 {
		t.Fatalf("head to keep with a lane %q", got)
	}
	orphan := laneRows[0]
	orphan.Prev = "elsewhere" // a lane that chains to some other registration
	orphan.Hash = store.ChainHash(orphan.Prev, orphan.Content)
	var ce *store.ChainError
	if _, err := store.VerifyChain(head, append(append([]store.ChainRow{}, b.rows...), orphan, laneRows[1], laneRows[2])); !errors.As(err, &ce) ||
		ce.Lane != 2 || ce.Seq != 1 || !strings.Contains(ce.Problem, "previous hash") {
		t.Fatalf("a lane not anchored in its registration: %v", err)
	}
	if _, err := store.VerifyChain(store.ChainHead{Seq: head.Seq, Hash: head.Hash}, rows); !errors.As(err, &ce) || ce.Lane != 2 || !strings.Contains(ce.Problem, "lane removed") {
		t.Fatalf("a registered lane without its head: %v", err)
	}
}
