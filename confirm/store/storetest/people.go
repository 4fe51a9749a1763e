package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// PeopleStore is what the people, votes and chain suites need of a store.
type PeopleStore interface {
	store.Store
	store.People
	store.Votes
	store.Chain
}

// RunPeople runs the conformance suites of [store.People], [store.Votes]
// and [store.Chain] against stores made by newStore. exec, when not nil,
// runs one SQL statement on the store's database directly (as an attacker
// with access to the database would), for the tampering tests.
func RunPeople(t *testing.T, newStore func(t *testing.T) PeopleStore, exec func(t *testing.T, s PeopleStore, sql string)) {
	t.Run("TokensAddListRevoke", func(t *testing.T) { tokens(t, newStore(t)) })
	t.Run("VoteOncePerPerson", func(t *testing.T) { voteOnce(t, newStore(t)) })
	t.Run("ConcurrentVotesReachQuorumOnce", func(t *testing.T) { concurrentVotes(t, newStore(t)) })
	t.Run("ChainVerifiesAfterWrites", func(t *testing.T) {
		s := newStore(t)
		writeChained(t, s)
		lanes := laneCount(t, s)
		if n, err := verify(t, s); err != nil || n != 10+lanes {
			t.Fatalf("verify: %d rows, %v; want %d rows (the anchor, 9 and %d lane registrations), nil", n, err, 10+lanes, lanes)
		}
	})
	if exec == nil {
		return
	}
	t.Run("PruneTakesNotesOfGoneDecisions", func(t *testing.T) { pruneOrphanNotes(t, newStore(t), exec) })
	for _, tc := range tamperCases {
		t.Run("Chain"+tc.name, func(t *testing.T) {
			s := newStore(t)
			writeChained(t, s)
			lane, seq := tc.lane, tc.seq
			if tc.table != "" {
				r := chainedRow(t, s, tc.table, tc.key)
				seq = r.Seq
				if lane == 0 {
					lane = r.Lane
				}
			}
			exec(t, s, tc.sql)
			_, err := verify(t, s)
			var ce *store.ChainError
			if !errors.As(err, &ce) {
				t.Fatalf("verify after %s: %v, want a *store.ChainError", tc.sql, err)
			}
			if ce.Lane != lane || ce.Seq != seq || !strings.Contains(ce.Problem, tc.problem) {
				t.Fatalf("verify after %s: %v; want lane %d position %d, %q", tc.sql, err, lane, seq, tc.problem)
			}
		})
	}
}

// tamperCases edit, delete and insert rows of the chain writeChained
// builds: the anchor the store wrote when it opened, d1's three events,
// d2's opened, the plan item, the mode event, two votes, d2's second
// event (on one chain, or with the journal and audit rows on the store
// instance's lane: docs/security.md). A case names the row at whose
// position (lane and seq, before the tampering) the break is (table, key;
// key "" for the table's one row), with lane, when set, the lane the
// break is reported in instead; or, with no table, the position itself.
// The "dressed up" cases delete a row and copy its position and hashes
// into chain_pruned, as if retention had pruned it, naming the anchor
// (which covers no placeholder) as their prune event. (Plan items,
// immutable by trigger, are covered by the unit tests of VerifyChain.)
var tamperCases = []struct {
	name, sql  string
	table, key string
	lane, seq  int64
	problem    string
}{
	{"EditedRow", `UPDATE decision_events SET detail = 'allow' WHERE decision_id = 'd1' AND seq = 2`, store.ChainDecisionEvents, "decision=d1 seq=2", 0, 0, "row changed"},
	{"EditedVote", `UPDATE votes SET option_id = 'no' WHERE person = 'alice'`, store.ChainVotes, "decision=d2 person=alice", 0, 0, "row changed"},
	// A number where an integer was: SQLite keeps the REAL, which the
	// verifier reads back as a float (PostgreSQL rounds it into the column).
	{"EditedTimeToAFraction", `UPDATE decision_events SET at = 1.5 WHERE decision_id = 'd1' AND seq = 2`, store.ChainDecisionEvents, "decision=d1 seq=2", 0, 0, "row changed"},
	{"EditedPerson", `UPDATE decision_events SET person = 'mallory' WHERE decision_id = 'd1' AND seq = 3`, store.ChainDecisionEvents, "decision=d1 seq=3", 0, 0, "row changed"},
	{"DeletedRow", `DELETE FROM decision_events WHERE decision_id = 'd1' AND seq = 3`, store.ChainDecisionEvents, "decision=d1 seq=3", 0, 0, "row removed"},
	{"DeletedLastRow", `DELETE FROM decision_events WHERE decision_id = 'd2' AND seq = 2`, store.ChainDecisionEvents, "decision=d2 seq=2", 0, 0, "row removed"},
	{"InsertedRowWithoutHash", `INSERT INTO decision_events (decision_id, seq, at, type, host, detail) VALUES ('d1', 4, 5, 'answered', 'http', 'yes')`, "", "", 0, 0, "inserted without a chain hash"},
	{"InsertedRowAtPosition", `INSERT INTO decision_events (decision_id, seq, at, type, host, detail, chain_lane, chain_seq, chain_prev, chain_hash)
		SELECT 'd1', 9, 5, 'answered', 'http', 'yes', chain_lane, chain_seq, 'x', 'y' FROM plan_items`, store.ChainPlanItems, "", 0, 0, "row inserted"},
	{"InsertedRowPastHead", `INSERT INTO decision_events (decision_id, seq, at, type, host, detail, chain_seq, chain_prev, chain_hash)
		VALUES ('d1', 9, 5, 'answered', 'http', 'yes', 11, 'x', 'y')`, "", "", 0, 11, "past the head"},
	{"InsertedLegacyRowAndBumpedHead", `INSERT INTO decision_events (decision_id, seq, at, type, host, detail) VALUES ('d1', 4, 5, 'answered', 'http', 'yes');
		UPDATE chain_head SET legacy_events = legacy_events + 1`, "", "", 0, 0, "inserted without a chain hash"},
	{"DeletedAnchor", `DELETE FROM prune_events WHERE kind = 'anchor'`, "", "", 0, 0, "chain anchors"},
	{"RowMovedToAnUnregisteredLane", `UPDATE decision_events SET chain_lane = 1000 WHERE decision_id = 'd1' AND seq = 2`,
		store.ChainDecisionEvents, "decision=d1 seq=2", 1000, 0, "no lane registration"},
	{"VoteDressedUpAsPruned", dressUp("votes", "votes", "person = 'alice'"), store.ChainVotes, "decision=d2 person=alice", 0, 0, "pruned placeholder"},
	{"ModeEventDressedUpAsPruned", dressUp("mode_events", "mode_events", "mode = 'plan'"), store.ChainModeEvents, "", 0, 0, "pruned placeholder"},
	{"JournalRowDressedUpAsPruned", dressUp("decision_events", "decision_events", "decision_id = 'd1' AND seq = 3"),
		store.ChainDecisionEvents, "decision=d1 seq=3", 0, 0, "pruned placeholder"},
	{"DeletedDecisionDressedUpAsPruned", dressUp("decision_events", "decision_events", "decision_id = 'd1'") +
		`; DELETE FROM decisions WHERE id = 'd1'`, store.ChainDecisionEvents, "decision=d1 seq=1", 0, 0, "pruned placeholder"},
}

// dressUp returns the SQL that moves the rows of table matching where
// into chain_pruned as placeholders claiming to be of table claim, of
// decision d1, left by the anchor's prune event, and deletes them.
func dressUp(table, claim, where string) string {
	return `INSERT INTO chain_pruned (lane, seq, table_name, row_key, prev, hash, pruned_at, prune_id, decision_id)
		SELECT chain_lane, chain_seq, '` + claim + `', 'x', chain_prev, chain_hash, 1, (SELECT MIN(id) FROM prune_events), 'd1' FROM ` + table + ` WHERE ` + where + `;
		DELETE FROM ` + table + ` WHERE ` + where
}

// chainedRow returns the chained row of table with key (the table's
// first row for key "") as s reads it back.
func chainedRow(t *testing.T, s store.Chain, table, key string) store.ChainRow {
	t.Helper()
	_, rows, err := s.ChainState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Table == table && (key == "" || r.Key == key) {
			return r
		}
	}
	t.Fatalf("no chained row %s %s", table, key)
	return store.ChainRow{}
}

// laneCount returns how many lanes s has registered: each is one row of
// the main chain (docs/security.md, "Tamper-evident audit").
func laneCount(t *testing.T, s store.Chain) int64 {
	t.Helper()
	head, _, err := s.ChainState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(head.Lanes))
}

func verify(t *testing.T, s store.Chain) (int64, error) {
	t.Helper()
	head, rows, err := s.ChainState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return store.VerifyChain(head, rows)
}

// writeChained writes nine chained rows through every chained write path.
func writeChained(t *testing.T, s PeopleStore) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	insert(t, s, openRecord("d1", "s1", at))
	must(t, s.Append(ctx, "d1", store.Event{Seq: 2, At: at, Type: store.EventPresented, Host: "ide", Detail: "shown"}))
	ok, err := s.Claim(ctx, "d1", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "yes"}, By: "ide",
		Reason: store.ReasonAnswered, At: at, Event: store.Event{Seq: 3, At: at, Type: store.EventAnswered, Host: "ide", Detail: "yes", Person: "alice"}})
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if rec, err := s.Get(ctx, "d1"); err != nil || rec.Events[2].Person != "alice" {
		t.Fatalf("the answered event's person did not come back: %+v %v", rec.Events, err)
	}
	insert(t, s, openRecord("d2", "s1", at))
	must(t, s.InsertPlanItem(ctx, store.PlanItem{ID: "d1", SessionID: "s1", DecidedAt: at, Item: []byte(`{"id":"d1"}`)}))
	must(t, s.InsertModeEvent(ctx, store.ModeEvent{SessionID: "s1", At: at, Mode: "plan", Revision: 2, By: "flag"}))
	for _, p := range []string{"alice", "bob"} {
		if _, err := s.CastVote(ctx, store.Vote{DecisionID: "d2", Person: p, OptionID: "yes", SnapshotSHA256: "h", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, s.Append(ctx, "d2", store.Event{Seq: 2, At: at, Type: store.EventPresented, Host: "ide"}))
	must(t, s.Append(ctx, "d2", store.Event{Seq: 2, At: at, Type: store.EventPresented, Host: "ide"})) // a repeat is not chained
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tokens: a token is found by its hash with every field, a second
// unrevoked token of one name is ErrExists, revoking twice is ErrNotFound,
// and after revoking a new token of the same name can be added.
func tokens(t *testing.T, s PeopleStore) {
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	alice := store.Token{Name: "alice", Role: store.RoleApprover, SHA256: "aa", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	must(t, s.AddToken(ctx, alice))
	if err := s.AddToken(ctx, store.Token{Name: "alice", Role: store.RoleAdmin, SHA256: "ab", CreatedAt: at}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("second token of alice: %v, want ErrExists", err)
	}
	got, err := s.TokenBySHA256(ctx, "aa")
	if err != nil || got != alice {
		t.Fatalf("token by hash: %+v %v, want %+v", got, err, alice)
	}
	if _, err := s.TokenBySHA256(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown hash: %v, want ErrNotFound", err)
	}
	must(t, s.RevokeToken(ctx, "alice", at.Add(time.Minute)))
	if err := s.RevokeToken(ctx, "alice", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second revoke: %v, want ErrNotFound", err)
	}
	must(t, s.AddToken(ctx, store.Token{Name: "alice", Role: store.RoleObserver, SHA256: "ac", CreatedAt: at.Add(time.Second)}))
	all, err := s.Tokens(ctx)
	if err != nil || len(all) != 2 || all[0].RevokedAt.IsZero() || all[0].Active(at) || !all[1].Active(at) {
		t.Fatalf("tokens: %+v %v", all, err)
	}
	if err := s.AddToken(ctx, store.Token{Name: "bob", Role: "root", SHA256: "b", CreatedAt: at}); err == nil {
		t.Fatal("unknown role accepted")
	}
}

// voteOnce: counts are per option and snapshot hash; a second vote of a
// person is ErrDuplicateVote and changes nothing.
func voteOnce(t *testing.T, s PeopleStore) {
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
	cast := func(p, opt, hash string) (int, error) {
		return s.CastVote(ctx, store.Vote{DecisionID: "d", Person: p, OptionID: opt, SnapshotSHA256: hash, At: at})
	}
	for _, c := range []struct {
		p, opt, hash string
		want         int
	}{{"alice", "yes", "h1", 1}, {"bob", "yes", "h2", 1}, {"carol", "no", "h1", 1}, {"dave", "yes", "h1", 2}} {
		if n, err := cast(c.p, c.opt, c.hash); err != nil || n != c.want {
			t.Fatalf("vote %v: %d %v, want %d", c, n, err, c.want)
		}
	}
	if _, err := cast("alice", "yes", "h1"); !errors.Is(err, store.ErrDuplicateVote) {
		t.Fatalf("second vote: %v, want ErrDuplicateVote", err)
	}
	if vs, err := s.VotesOf(ctx, "d"); err != nil || len(vs) != 4 {
		t.Fatalf("votes: %+v %v", vs, err)
	}
}

// concurrentVotes: eight people vote at once; the counts they see are
// exactly 1..8, so exactly one vote completes any quorum.
func concurrentVotes(t *testing.T, s PeopleStore) {
	const n = 8
	var wg sync.WaitGroup
	counts := make(chan int, n)
	for i := range n {
		wg.Go(func() {
			c, err := s.CastVote(context.Background(), store.Vote{DecisionID: "d", Person: fmt.Sprint("p", i), OptionID: "yes", SnapshotSHA256: "h", At: time.Now()})
			if err != nil {
				t.Error(err)
			}
			counts <- c
		})
	}
	wg.Wait()
	close(counts)
	seen := map[int]bool{}
	for c := range counts {
		if seen[c] {
			t.Fatalf("two votes saw count %d", c)
		}
		seen[c] = true
	}
	if len(seen) != n {
		t.Fatalf("counts %v, want 1..%d", seen, n)
	}
	if n, err := verify(t, s); err != nil || n != 9 { // the anchor and 8 votes
		t.Fatalf("verify: %d %v", n, err)
	}
}

// pruneOrphanNotes: a note whose decision is gone (left by a build whose
// prune kept notes) goes at the next prune; the note of a decision that is
// still there stays.
func pruneOrphanNotes(t *testing.T, s PeopleStore, exec func(t *testing.T, s PeopleStore, sql string)) {
	notes, ok1 := store.Store(s).(store.Notes)
	pruner, ok2 := store.Store(s).(store.Pruner)
	if !ok1 || !ok2 {
		t.Skip("the store keeps no notes or cannot prune")
	}
	ctx := context.Background()
	now := time.Now().UTC()
	insert(t, s, openRecord("live", "s", now))
	if err := notes.AddNote(ctx, "live", store.Event{At: now, Type: store.EventAnswered, Host: "other", Detail: "live"}); err != nil {
		t.Fatal(err)
	}
	exec(t, s, `INSERT INTO decision_notes (decision_id, bridge_id, at, type, host, person, detail) VALUES ('gone', '', 1, 'answered', 'other', '', 'gone')`)
	if _, err := pruner.Prune(ctx, now); err != nil {
		t.Fatal(err)
	}
	got, err := notes.TakeNotes(ctx, "")
	if err != nil || len(got) != 1 || got[0].DecisionID != "live" {
		t.Fatalf("notes after prune: %+v, %v; want only the live decision's", got, err)
	}
}
