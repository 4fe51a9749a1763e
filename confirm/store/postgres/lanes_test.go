package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// twoLanes opens two store instances on one database, writes decisions
// through both at once (inserts, appends, closings, claims across them)
// and returns them with a connection for the test's own SQL and each
// instance's lane (the chain_lane of its rows).
func twoLanes(t *testing.T, url string) (a, b *postgres.Store, c *pgx.Conn, laneA, laneB int64) {
	t.Helper()
	a, b = open(t, url), open(t, url)
	ctx := context.Background()
	at := time.Now().UTC()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i, s := range []*postgres.Store{a, b} {
		for j := range 8 {
			wg.Go(func() {
				id := fmt.Sprintf("i%d-d%d", i, j)
				if _, _, err := s.Insert(ctx, openRecord(id, at)); err != nil {
					errs <- err
					return
				}
				if err := s.Append(ctx, id, store.Event{Seq: 2, At: at, Type: store.EventPresented, Host: "ide"}); err != nil {
					errs <- err
				}
			})
		}
	}
	wg.Wait()
	for j := range 8 { // each instance claims the other's decisions
		ok, err := a.Claim(ctx, fmt.Sprintf("i1-d%d", j), store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "yes"},
			By: "http", Reason: store.ReasonAnswered, At: at, Event: store.Event{Seq: 3, At: at, Type: store.EventAnswered, Host: "http"}})
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if err := b.AppendClosing(ctx, fmt.Sprintf("i1-d%d", j), []store.Event{{Seq: 4, At: at, Type: store.EventDelivered}},
			store.PlanItem{ID: fmt.Sprintf("i1-d%d", j), SessionID: "s", DecidedAt: at, Item: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	if err := c.QueryRow(ctx, `SELECT (SELECT chain_lane FROM decision_events WHERE decision_id = 'i0-d0' AND seq = 1),
		(SELECT chain_lane FROM decision_events WHERE decision_id = 'i1-d0' AND seq = 1)`).Scan(&laneA, &laneB); err != nil {
		t.Fatal(err)
	}
	return a, b, c, laneA, laneB
}

// TestTwoInstancesChainOnTwoLanes: two store instances writing at once
// chain their journal and audit rows on two lanes, each registered in the
// main chain, none on the main chain, and the whole verifies: every row
// counted once, and the head users keep stands for both lanes.
func TestTwoInstancesChainOnTwoLanes(t *testing.T) {
	_, b, c, laneA, laneB := twoLanes(t, pgtest.Start(t).Database(t))
	ctx := context.Background()
	if laneA == 0 || laneB == 0 || laneA == laneB {
		t.Fatalf("lanes %d and %d: want two lanes, neither the main chain", laneA, laneB)
	}
	var onMain, regs, claimLane int64
	if err := c.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM decision_events WHERE chain_lane = 0) + (SELECT COUNT(*) FROM plan_items WHERE chain_lane = 0),
		(SELECT COUNT(*) FROM prune_events WHERE kind = 'lane' AND id IN ($1, $2)),
		(SELECT chain_lane FROM decision_events WHERE decision_id = 'i1-d0' AND seq = 3)`, laneA, laneB).Scan(&onMain, &regs, &claimLane); err != nil {
		t.Fatal(err)
	}
	if onMain != 0 || regs != 2 || claimLane != laneA {
		t.Fatalf("%d journal and audit rows on the main chain, %d lane registrations, a's claim on lane %d: want 0, 2, %d", onMain, regs, claimLane, laneA)
	}
	head, rows, err := b.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := store.VerifyChain(head, rows)
	// The anchor, 2 registrations; 16 decisions' opened and presented; 8 claims, deliveries and audit rows.
	if want := int64(1 + 2 + 16*2 + 8*3); err != nil || n != want || len(head.Lanes) != 2 {
		t.Fatalf("verify: %d rows, %v, %d lanes; want %d rows, nil, 2 lanes", n, err, len(head.Lanes), want)
	}
	if h := store.ChainHeadHash(head); h == head.Hash || len(h) != 64 {
		t.Fatalf("the head to keep %q: want one hash over every lane's head, not the main chain's %q", h, head.Hash)
	}
}

// TestVerifyFindsTamperingInLanes: a row changed in a lane, a lane's row
// removed, a lane removed whole (its head and rows), a lane's row moved
// to the other lane, a lane with no registration in the main chain, and a
// registration inserted into the main chain are each a break that names
// the lane.
func TestVerifyFindsTamperingInLanes(t *testing.T) {
	srv := pgtest.Start(t)
	for _, tc := range []struct {
		name, sql string // $A and $B are the two lanes
		lane      string // the lane the break is in: "A", "B" or "0"
		problem   string
	}{
		{"RowChanged", `UPDATE decision_events SET host = 'x' WHERE decision_id = 'i0-d3' AND seq = 2`, "A", "row changed"},
		{"RowRemoved", `DELETE FROM decision_events WHERE decision_id = 'i1-d2' AND seq = 2`, "B", "row removed"},
		{"LaneRemoved", `DELETE FROM decision_events WHERE chain_lane = $B; DELETE FROM feed_events WHERE decision_id LIKE 'i1-%';
			ALTER TABLE plan_items DISABLE TRIGGER USER; DELETE FROM plan_items WHERE chain_lane = $B; DELETE FROM chain_lanes WHERE lane = $B`, "B", "lane removed"},
		{"RowMovedToTheOtherLane", `UPDATE decision_events SET chain_lane = $A WHERE decision_id = 'i1-d5' AND seq = 1`, "AB", ""},
		{"ForgedLane", `INSERT INTO chain_lanes VALUES (999, 1, 'h'); INSERT INTO decision_events (decision_id, seq, at, type, chain_lane, chain_seq, chain_prev, chain_hash)
			VALUES ('i0-d0', 9, 1, 'answered', 999, 1, 'x', 'h')`, "999", "no lane registration"},
		{"ForgedRegistration", `INSERT INTO prune_events (id, kind, at, pruned_before, placeholders, placeholders_sha256, legacy_events, legacy_plan_items,
			legacy_mode_events, legacy_votes, chain_seq, chain_prev, chain_hash) SELECT 999, 'lane', 1, 1, 0, '', 0, 0, 0, 0, seq + 1, hash, 'h' FROM chain_head`, "0", "past the head"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, b, c, laneA, laneB := twoLanes(t, srv.Database(t))
			ctx := context.Background()
			sql := strings.NewReplacer("$A", fmt.Sprint(laneA), "$B", fmt.Sprint(laneB)).Replace(tc.sql)
			if _, err := c.Exec(ctx, sql); err != nil {
				t.Fatal(err)
			}
			lane := map[string]int64{"A": laneA, "B": laneB, "0": 0, "999": 999}[tc.lane]
			if tc.lane == "AB" { // verify walks the lanes by number: a second row in A, or a gap in B, whichever it meets first
				lane, tc.problem = laneA, "row inserted: a second row"
				if laneB < laneA {
					lane, tc.problem = laneB, "row removed"
				}
			}
			head, rows, err := b.ChainState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = store.VerifyChain(head, rows)
			var ce *store.ChainError
			if !errors.As(err, &ce) || ce.Lane != lane || !strings.Contains(ce.Problem, tc.problem) {
				t.Fatalf("verify: %v; want a break in lane %d: %q", err, lane, tc.problem)
			}
			if lane != 0 && !strings.Contains(err.Error(), fmt.Sprintf("lane %d ", lane)) {
				t.Fatalf("the break %q does not name lane %d", err, lane)
			}
		})
	}
}

// TestInstancesDoNotWaitForEachOthersChainHead: while a transaction holds
// one instance's lane head (and the main chain's head) locked, another
// instance's chained writes (a new decision, an event, a closing, a
// claim) go through: no chained write waits for another process's. The
// second instance's sessions give up a lock wait after 2 s
// (lock_timeout), so a write that waited would fail instead of hang.
func TestInstancesDoNotWaitForEachOthersChainHead(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	a := open(t, url)
	b := open(t, url+"&options=-c%20lock_timeout%3D2s")
	ctx := context.Background()
	at := time.Now().UTC()
	for _, s := range []*postgres.Store{a, b} { // each registers its lane
		if _, _, err := s.Insert(ctx, openRecord(fmt.Sprintf("first-%p", s), at)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var laneA int64
	if err := c.QueryRow(ctx, `SELECT chain_lane FROM decision_events WHERE decision_id = $1`, fmt.Sprintf("first-%p", a)).Scan(&laneA); err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx) // as a's transaction holding its lane head open
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, fmt.Sprintf(`SELECT 1 FROM chain_lanes WHERE lane = %d FOR UPDATE; SELECT 1 FROM chain_head FOR UPDATE`, laneA)); err != nil {
		t.Fatal(err)
	}
	if _, created, err := b.Insert(ctx, openRecord("d", at)); err != nil || !created {
		t.Fatalf("insert while the other instance holds its head: %v %v", created, err)
	}
	if err := b.Append(ctx, "d", store.Event{Seq: 2, At: at, Type: store.EventPresented}); err != nil {
		t.Fatalf("append while the other instance holds its head: %v", err)
	}
	if ok, err := b.Claim(ctx, "d", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "yes"}, By: "http",
		Reason: store.ReasonAnswered, At: at, Event: store.Event{Seq: 3, At: at, Type: store.EventAnswered}}); err != nil || !ok {
		t.Fatalf("claim while the other instance holds its head: %v %v", ok, err)
	}
	if err := b.AppendClosing(ctx, "d", []store.Event{{Seq: 4, At: at, Type: store.EventDelivered}},
		store.PlanItem{ID: "d", SessionID: "s", DecidedAt: at, Item: []byte(`{}`)}); err != nil {
		t.Fatalf("closing while the other instance holds its head: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	head, rows, err := a.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.VerifyChain(head, rows); err != nil {
		t.Fatal(err)
	}
}
