package store

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
)

// ChainPruneEvents is the chained table of the chain's anchor and of every
// prune (docs/decisions.md, "Retention").
const ChainPruneEvents = "prune_events"

// The kinds of a [PruneEvent].
const (
	// PruneKindAnchor is the one row, written when a store first opens
	// with this table, that records how many rows without a hash each
	// table had then (and covers the placeholders of earlier prunes).
	PruneKindAnchor = "anchor"
	// PruneKindPrune is one run of retention that deleted decisions.
	PruneKindPrune = "prune"
	// PruneKindLane registers a lane (docs/security.md, "Tamper-evident
	// audit"): one store instance's own chain, whose number is the
	// event's id and whose first row chains to the event's hash.
	PruneKindLane = "lane"
)

// PruneEvent is the content of a prune_events row that [VerifyChain] uses.
// Legacy is, by table name, how many rows without a chain hash the table
// had for the anchor, or how many such rows the prune deleted.
// Placeholders and PlaceholdersSHA256 are the count and the
// [PlaceholdersDigest] of the chain_pruned rows the event covers (for the
// anchor: those of prunes from before it).
type PruneEvent struct {
	ID                 int64
	Kind               string
	Placeholders       int64
	PlaceholdersSHA256 string
	Legacy             map[string]int64
}

// Placeholder is one chain_pruned row as a prune writes it, for
// [PlaceholdersDigest]; Lane is the chain of the row it stands for (0 the
// main chain).
type Placeholder struct {
	Lane     int64
	Seq      int64
	Table    string
	Decision string
	Hash     string
}

// PlaceholdersDigest returns the lowercase hex SHA-256 of the JSON array
// of [seq, table, decision, hash] of ps (with the lane appended,
// [seq, table, decision, hash, lane], for a placeholder of a lane other
// than 0) sorted by lane and then seq: what a prune event records of the
// placeholders it leaves. Placeholders of the main chain only give the
// digest they gave before lanes.
func PlaceholdersDigest(ps []Placeholder) string {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b Placeholder) int { return cmp.Or(cmp.Compare(a.Lane, b.Lane), cmp.Compare(a.Seq, b.Seq)) })
	list := make([][]any, 0, len(ps))
	for _, p := range ps {
		if p.Lane != 0 {
			list = append(list, []any{p.Seq, p.Table, p.Decision, p.Hash, p.Lane})
			continue
		}
		list = append(list, []any{p.Seq, p.Table, p.Decision, p.Hash})
	}
	b, _ := json.Marshal(list) // integers and strings only
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// PruneEventColumns are the content columns of a prune_events row, in
// order: ChainContent of a prune event is ChainContent(ChainPruneEvents,
// id, kind, at, pruned_before, placeholders, placeholders_sha256,
// legacy_events, legacy_plan_items, legacy_mode_events, legacy_votes),
// times in Unix nanoseconds.
var PruneEventColumns = []string{"id", "kind", "at", "pruned_before", "placeholders", "placeholders_sha256",
	"legacy_events", "legacy_plan_items", "legacy_mode_events", "legacy_votes"}

// PruneEventContent returns the ChainContent of prune event e written at
// at with cut pruned_before (Unix nanoseconds).
func PruneEventContent(e PruneEvent, at, cut int64) []byte {
	return ChainContent(ChainPruneEvents, e.ID, e.Kind, at, cut, e.Placeholders, e.PlaceholdersSHA256,
		e.Legacy[ChainDecisionEvents], e.Legacy[ChainPlanItems], e.Legacy[ChainModeEvents], e.Legacy[ChainVotes])
}

// ParsePruneEvent reads a prune event back from its ChainContent.
func ParsePruneEvent(content []byte) (*PruneEvent, error) {
	d := json.NewDecoder(bytes.NewReader(content))
	d.UseNumber()
	var f []any
	if err := d.Decode(&f); err != nil || len(f) != 1+len(PruneEventColumns) {
		return nil, fmt.Errorf("a prune event that does not parse")
	}
	ints := make([]int64, len(f))
	strs := make([]string, len(f))
	for i, v := range f {
		switch x := v.(type) {
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				return nil, fmt.Errorf("a prune event that does not parse")
			}
			ints[i] = n
		case string:
			strs[i] = x
		default:
			return nil, fmt.Errorf("a prune event that does not parse")
		}
	}
	kind := strs[2]
	if kind != PruneKindAnchor && kind != PruneKindPrune && kind != PruneKindLane {
		return nil, fmt.Errorf("a prune event of unknown kind %q", kind)
	}
	return &PruneEvent{ID: ints[1], Kind: kind, Placeholders: ints[5], PlaceholdersSHA256: strs[6], Legacy: map[string]int64{
		ChainDecisionEvents: ints[7], ChainPlanItems: ints[8], ChainModeEvents: ints[9], ChainVotes: ints[10]}}, nil
}
