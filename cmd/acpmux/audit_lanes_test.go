package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestAuditVerifyChecksEveryLane: two store instances (two bridges) on
// one PostgreSQL database chain on two lanes; `acpmux audit verify`
// prints how many lanes it checked and the one head hash to keep
// (store.ChainHeadHash over every lane's head), and, once one lane is
// removed whole (its rows and its head), exits 1 with a BROKEN line that
// names the lane.
func TestAuditVerifyChecksEveryLane(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	ctx := context.Background()
	at := time.Now().UTC()
	var last *postgres.Store
	for i := range 2 {
		s, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		id := fmt.Sprint("d", i)
		if _, _, err := s.Insert(ctx, store.Record{ID: id, SessionID: "s", AgentKey: id, Request: []byte(`{}`), Snapshot: []byte(`{}`),
			Status: store.StatusOpen, CreatedAt: at, Deadline: at.Add(time.Hour), Events: []store.Event{{Seq: 1, At: at, Type: store.EventOpened}}}); err != nil {
			t.Fatal(err)
		}
		last = s
	}
	head, _, err := last.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("audit", "verify", "--state", url)
	if want := fmt.Sprintf("ok: 5 rows chained (the main chain and 2 lanes), head %s\n", store.ChainHeadHash(head)); code != 0 || out != want {
		t.Fatalf("audit verify: %d %q %q; want 0 %q", code, out, errs, want)
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var lane int64
	if err := c.QueryRow(ctx, `SELECT chain_lane FROM decision_events WHERE decision_id = 'd1'`).Scan(&lane); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, fmt.Sprintf(`DELETE FROM feed_events WHERE decision_id = 'd1'; DELETE FROM decision_events WHERE chain_lane = %d;
		DELETE FROM decisions WHERE id = 'd1'; DELETE FROM chain_lanes WHERE lane = %d`, lane, lane)); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI("audit", "verify", "--state", url)
	if code != 1 || !strings.HasPrefix(out, "BROKEN after ") || !strings.Contains(out, fmt.Sprintf("lane %d position 0: lane removed", lane)) {
		t.Fatalf("audit verify after a lane was removed: %d %q; want 1 and BROKEN naming lane %d", code, out, lane)
	}
}
