package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The tables whose rows are hash-chained (docs/security.md, "Tamper-evident
// audit"): the decision journal, the audit rows, gate mode changes and
// quorum votes; and [ChainPruneEvents].
const (
	ChainDecisionEvents = "decision_events"
	ChainPlanItems      = "plan_items"
	ChainModeEvents     = "mode_events"
	ChainVotes          = "votes"
)

// ChainTables lists the chained tables in a fixed order.
var ChainTables = []string{ChainDecisionEvents, ChainPlanItems, ChainModeEvents, ChainVotes, ChainPruneEvents}

// ChainContent returns the canonical content of one chained row: the JSON
// array of table followed by the row's column values in the table's column
// order (strings and int64 nanoseconds, as stored; a value of another type,
// which only a tampered database holds, as json.Marshal encodes it).
// Writing and verifying compute it the same way.
func ChainContent(table string, fields ...any) []byte {
	// json.Marshal of the []any, element by element (an array is its
	// elements' encodings between brackets, comma-separated), integers
	// and strings that JSON writes as they are without reflection.
	b := make([]byte, 0, 128)
	b = appendJSONString(append(b, '['), table)
	for _, f := range fields {
		b = append(b, ',')
		switch v := f.(type) {
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case string:
			b = appendJSONString(b, v)
		default:
			// Not what the stores write; but verifying reads back whatever
			// the database holds (a tampered column of another type), which
			// must hash to a mismatch, not stop the check.
			e, err := json.Marshal(v)
			if err != nil {
				e, _ = json.Marshal(fmt.Sprint(v))
			}
			b = append(b, e...)
		}
	}
	return append(b, ']')
}

// appendJSONString appends s as json.Marshal encodes it (with its HTML
// escaping): between quotes, with `"` and `\` escaped by a backslash, the
// control characters \b, \f, \n, \r and \t by their short escapes and the
// other bytes below 0x20 and <, > and & as \u00XX (lowercase hex), each
// byte that is not part of valid UTF-8 as \ufffd, U+2028 and U+2029 as
// \u2028 and \u2029, and everything else as it is: the form rows were
// chained in since the chain began, which TestChainContentPinsTheEscapes
// writes out, and the other TestChainContent* check against json.Marshal
// byte for byte (encoding/json without GOEXPERIMENT=jsonv2, which writes
// invalid UTF-8 as the raw replacement character instead).
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0 // s[start:i] is still to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// ChainHash returns the hash a row carries: lowercase hex SHA-256 of the
// previous row's hash ("" for the first row), a newline, and content.
func ChainHash(prev string, content []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write([]byte{'\n'})
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// ChainRow is one chained row as read back from the store, for
// [VerifyChain]. Seq is 0 for a row without chain columns (written before
// the chain started, or inserted around it). Lane is the chain the row is
// in: 0 for the main chain, or a lane (docs/security.md, "Tamper-evident
// audit"): one store instance's own chain of its journal and audit rows,
// registered in the main chain by a prune event of kind [PruneKindLane]
// whose id is the lane's. A Pruned row is the
// placeholder that retention left for a row it deleted (docs/decisions.md,
// "Retention"): its position, previous hash and hash, but no content, so
// the chain stays unbroken across it, as long as a chained prune event
// vouches for it.
type ChainRow struct {
	Table   string
	Key     string // the row's key, for reports ("decision=ID seq=3")
	Lane    int64
	Seq     int64
	Prev    string
	Hash    string
	Content []byte // ChainContent of the row's columns as stored now; nil when Pruned
	Pruned  bool
	// For a Pruned row: the id of the prune event that left it, the
	// decision whose journal row it stands for, and whether that decision
	// is still in the store (then the row was not pruned but removed).
	PruneID        int64
	Decision       string
	DecisionExists bool
}

// ChainHead is the main chain's head row: the newest Seq and Hash, and how many
// rows of each table the chain found when it started (Legacy, by table
// name, as the head row records it): those carry no hash. [VerifyChain]
// does not trust Legacy (the head row is not chained); it counts against
// the chained anchor and prune events instead. Lanes are the head rows
// of the lanes (every lane but 0), in no particular order.
type ChainHead struct {
	Seq    int64
	Hash   string
	Legacy map[string]int64
	Lanes  []LaneHead
}

// LaneHead is the head row of one lane: its newest position (0 before its
// first row) and hash (its registration row's hash before its first row).
type LaneHead struct {
	Lane int64
	Seq  int64
	Hash string
}

// ChainHeadHash returns the one hash that stands for every head of h, for
// a user to keep and compare later: h.Hash when the store has no lanes
// (the main chain's head, as before lanes), else the lowercase hex SHA-256
// of one line per chain, "LANE SEQ HASH\n" in decimal, the main chain
// (lane 0) first and then the lanes by number.
func ChainHeadHash(h ChainHead) string {
	if len(h.Lanes) == 0 {
		return h.Hash
	}
	lanes := slices.Clone(h.Lanes)
	slices.SortFunc(lanes, func(a, b LaneHead) int { return cmp.Compare(a.Lane, b.Lane) })
	d := sha256.New()
	fmt.Fprintf(d, "0 %d %s\n", h.Seq, h.Hash)
	for _, l := range lanes {
		fmt.Fprintf(d, "%d %d %s\n", l.Lane, l.Seq, l.Hash)
	}
	return hex.EncodeToString(d.Sum(nil))
}

// Chain is implemented by stores whose journal and audit rows are
// hash-chained.
type Chain interface {
	// ChainState returns the head and every row of [ChainTables], in no
	// particular order, read in one snapshot of the database.
	ChainState(ctx context.Context) (ChainHead, []ChainRow, error)
}

// ChainError is the first break [VerifyChain] found: Lane is the chain
// (0 the main chain), Seq the position in it (0 for a row that has none),
// Table and Key name the row when there is one, Problem says what is wrong.
type ChainError struct {
	Lane    int64
	Seq     int64
	Table   string
	Key     string
	Problem string
}

func (e *ChainError) Error() string {
	where := fmt.Sprintf("chain position %d", e.Seq)
	if e.Lane != 0 {
		where = fmt.Sprintf("lane %d position %d", e.Lane, e.Seq)
	}
	if e.Table == "" {
		return fmt.Sprintf("%s: %s", where, e.Problem)
	}
	return fmt.Sprintf("%s (%s %s): %s", where, e.Table, e.Key, e.Problem)
}

// VerifyChain walks the main chain and every lane in chain order and
// returns nil when each forms an unbroken chain ending at its head, or the
// first break as a *ChainError: a
// row whose content no longer gives its hash (changed), a position missing
// (removed), two rows at one position or a row past the head (inserted), a
// row whose previous hash is not its predecessor's hash, a count of rows
// without a hash that differs from the chained anchor's count less what
// chained prunes deleted (inserted or removed around the chain), or a head
// that does not match the last row (rows removed at the end). A lane must
// be registered by a prune event of kind [PruneKindLane] in the main
// chain, whose id is the lane's and whose hash its first row chains to,
// and every registered lane must have its head: a lane removed whole
// (its head and rows), rows or a head of a lane nobody registered, and a
// prune event outside the main chain are breaks too. A pruned
// placeholder stands for its row, its content not checked, only when a
// chained prune event covers it: the event's count and
// [PlaceholdersDigest] match exactly the placeholders carrying its id, the
// placeholder stands for a journal row (decision_events), its decision
// is no longer in the store, and, in the main chain, the event comes
// after it. It reports n, the number of chained rows
// checked in every chain, placeholders included.
func VerifyChain(head ChainHead, rows []ChainRow) (n int64, err error) {
	var chained []ChainRow
	legacy := map[string]int64{}
	events := map[int64]pruneRow{}
	lanes := map[int64]pruneRow{} // registrations, by lane
	var anchors int
	var anchor *PruneEvent
	for _, r := range rows {
		if r.Seq == 0 {
			legacy[r.Table]++
			continue
		}
		if r.Table == ChainPruneEvents && r.Lane != 0 {
			return 0, &ChainError{Lane: r.Lane, Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: "a prune event outside the main chain"}
		}
		if r.Table == ChainPruneEvents && !r.Pruned {
			e, err := ParsePruneEvent(r.Content)
			if err != nil {
				return 0, &ChainError{Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: err.Error()}
			}
			events[e.ID] = pruneRow{r.Seq, r.Hash, e}
			switch e.Kind {
			case PruneKindAnchor:
				anchors++
				anchor = e
			case PruneKindLane:
				lanes[e.ID] = pruneRow{r.Seq, r.Hash, e}
			}
		}
		chained = append(chained, r)
	}
	if anchors != 1 {
		return 0, &ChainError{Table: ChainPruneEvents, Problem: fmt.Sprintf("%d chain anchors, want exactly 1 (the anchor was removed or a second one inserted)", anchors)}
	}
	want := map[string]int64{}
	for t, c := range anchor.Legacy {
		want[t] = c
	}
	for _, e := range events {
		if e.Prune.Kind == PruneKindPrune {
			for t, c := range e.Prune.Legacy {
				want[t] -= c
			}
		}
	}
	for _, t := range ChainTables {
		switch {
		case legacy[t] > want[t]:
			return 0, &ChainError{Table: t, Problem: fmt.Sprintf("%d rows inserted without a chain hash", legacy[t]-want[t])}
		case legacy[t] < want[t]:
			return 0, &ChainError{Table: t, Problem: fmt.Sprintf("%d rows from before the chain started were removed", want[t]-legacy[t])}
		}
	}
	covered := coveredPlaceholders(chained, events)
	byLane := map[int64][]ChainRow{}
	for _, r := range chained {
		byLane[r.Lane] = append(byLane[r.Lane], r)
	}
	heads := map[int64]LaneHead{0: {Seq: head.Seq, Hash: head.Hash}}
	for _, h := range head.Lanes {
		if _, dup := heads[h.Lane]; dup || h.Lane <= 0 {
			return 0, &ChainError{Lane: h.Lane, Problem: "a second head for this lane"}
		}
		if _, ok := lanes[h.Lane]; !ok {
			return 0, &ChainError{Lane: h.Lane, Problem: "no lane registration in the main chain names this lane's head (a forged lane)"}
		}
		heads[h.Lane] = h
	}
	for _, lane := range slices.Sorted(maps.Keys(byLane)) {
		if _, ok := heads[lane]; !ok && lanes[lane].Prune == nil {
			r := byLane[lane][0]
			return 0, &ChainError{Lane: lane, Seq: r.Seq, Table: r.Table, Key: r.Key,
				Problem: "no lane registration in the main chain names this row's lane (a row moved to another lane, or a forged lane)"}
		}
	}
	if n, err = verifyLane(0, "", heads[0], byLane[0], covered); err != nil { // the main chain first: it holds the registrations
		return n, err
	}
	var ids []int64
	for lane, reg := range lanes {
		if _, ok := heads[lane]; !ok {
			return 0, &ChainError{Lane: lane, Problem: fmt.Sprintf("lane removed: registered at main chain position %d, its head is gone", reg.Seq)}
		}
		ids = append(ids, lane)
	}
	slices.Sort(ids)
	for _, lane := range ids { // each lane starts from its registration's hash
		m, err := verifyLane(lane, lanes[lane].Hash, heads[lane], byLane[lane], covered)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// verifyLane walks the rows of one chain, lane, whose first row's
// previous hash is first, against its head, for [VerifyChain].
func verifyLane(lane int64, first string, head LaneHead, chained []ChainRow, covered map[laneSeq]string) (n int64, err error) {
	slices.SortStableFunc(chained, func(a, b ChainRow) int { return cmp.Compare(a.Seq, b.Seq) })
	prev, next := first, int64(1)
	for i, r := range chained {
		if i+1 < len(chained) && chained[i+1].Seq == r.Seq {
			if r.Prev == prev && (r.Pruned || ChainHash(r.Prev, r.Content) == r.Hash) {
				r = chained[i+1] // name the row that does not fit
			}
			return n, &ChainError{Lane: lane, Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: "row inserted: a second row at this position"}
		}
		switch {
		case r.Seq < next:
			return n, &ChainError{Lane: lane, Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: "row inserted: a second row at this position"}
		case r.Seq > head.Seq:
			return n, &ChainError{Lane: lane, Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: fmt.Sprintf("row inserted: past the head (%d)", head.Seq)}
		case r.Seq > next:
			return n, &ChainError{Lane: lane, Seq: next, Problem: "row removed"}
		case r.Prev != prev:
			return n, &ChainError{Lane: lane, Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: "previous hash does not match the row before it (a row was inserted or removed before this one)"}
		case !r.Pruned && ChainHash(r.Prev, r.Content) != r.Hash:
			return n, &ChainError{Lane: lane, Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: "row changed: its content does not give its hash"}
		case r.Pruned && covered[laneSeq{lane, r.Seq}] != "":
			return n, &ChainError{Lane: lane, Seq: r.Seq, Table: r.Table, Key: r.Key, Problem: "row removed: a pruned placeholder " + covered[laneSeq{lane, r.Seq}]}
		}
		prev, next, n = r.Hash, next+1, n+1
	}
	if next-1 != head.Seq {
		return n, &ChainError{Lane: lane, Seq: next, Problem: fmt.Sprintf("row removed: the head is at %d, the last row at %d", head.Seq, next-1)}
	}
	if prev != head.Hash {
		return n, &ChainError{Lane: lane, Seq: head.Seq, Problem: "the head's hash does not match the last row"}
	}
	return n, nil
}

// laneSeq is a position in one chain.
type laneSeq struct{ lane, seq int64 }

// coveredPlaceholders returns, by lane and position, why each placeholder in rows
// is not vouched for by the prune event it names in events; a placeholder
// that is covered is not in the map.
func coveredPlaceholders(rows []ChainRow, events map[int64]pruneRow) map[laneSeq]string {
	bad := map[laneSeq]string{}
	byEvent := map[int64][]ChainRow{}
	for _, r := range rows {
		if r.Pruned {
			byEvent[r.PruneID] = append(byEvent[r.PruneID], r)
		}
	}
	for id, ps := range byEvent {
		e, ok := events[id]
		list := make([]Placeholder, 0, len(ps))
		for _, p := range ps {
			list = append(list, Placeholder{Lane: p.Lane, Seq: p.Seq, Table: p.Table, Decision: p.Decision, Hash: p.Hash})
		}
		digestOK := ok && e.Prune.Placeholders == int64(len(ps)) && e.Prune.PlaceholdersSHA256 == PlaceholdersDigest(list)
		for _, p := range ps {
			at := laneSeq{p.Lane, p.Seq}
			switch {
			case !ok:
				bad[at] = fmt.Sprintf("names prune event %d, which is not in the chain", id)
			case e.Prune.Kind == PruneKindLane:
				bad[at] = fmt.Sprintf("names prune event %d, a lane registration, not a prune", id)
			case p.Table != ChainDecisionEvents:
				bad[at] = "stands for a " + p.Table + " row: retention prunes only the journal (decision_events)"
			case p.DecisionExists:
				bad[at] = "stands for a journal row of decision " + p.Decision + ", which is still in the store"
			case p.Lane == 0 && e.Seq <= p.Seq:
				bad[at] = fmt.Sprintf("names prune event %d at position %d, before the row it stands for", id, e.Seq)
			case !digestOK:
				bad[at] = fmt.Sprintf("is not one of the placeholders prune event %d recorded (their count or digest differs)", id)
			}
		}
	}
	return bad
}

// pruneRow is a chained prune event, its position and its hash in the
// main chain.
type pruneRow struct {
	Seq   int64
	Hash  string
	Prune *PruneEvent
}
