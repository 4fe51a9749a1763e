package postgres_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestAWritesChainedRowsMoveTheHeadOnce: a closing's journal events and
// its audit row take their chain head, the store instance's lane's, once
// (one UPDATE of chain_lanes for the write, counted by a trigger the test
// adds), a journal event or audit row
// already stored (ON CONFLICT) takes no chain position (the head moves on
// by the rows inserted only; a write inserting none leaves it alone), and
// the chain verifies.
func TestAWritesChainedRowsMoveTheHeadOnce(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	s := open(t, url)
	ctx := context.Background()
	at := time.Now().UTC()
	if _, created, err := s.Insert(ctx, openRecord("d1", at)); err != nil || !created {
		t.Fatalf("insert: %v %v", created, err)
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE head_updates (n INTEGER);
		CREATE FUNCTION count_head_update() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO head_updates VALUES (1); RETURN NEW; END $$;
		CREATE TRIGGER head_updated AFTER UPDATE ON chain_lanes FOR EACH ROW EXECUTE FUNCTION count_head_update();`); err != nil {
		t.Fatal(err)
	}
	state := func() (updates, seq int64) {
		t.Helper()
		if err := c.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM head_updates), (SELECT seq FROM chain_lanes)`).Scan(&updates, &seq); err != nil {
			t.Fatal(err)
		}
		return updates, seq
	}
	_, seq0 := state()
	item := store.PlanItem{ID: "d1", SessionID: "s", DecidedAt: at, Item: json.RawMessage(`{"n":1}`)}
	evs := []store.Event{
		{Seq: 2, At: at, Type: store.EventAnswered, Host: "ide"},
		{Seq: 1, At: at, Type: store.EventDelivered, Host: "a second opened"}, // seq 1 is stored: skipped
		{Seq: 3, At: at, Type: store.EventDelivered},
	}
	if err := s.AppendClosing(ctx, "d1", evs, item); err != nil {
		t.Fatal(err)
	}
	if updates, seq := state(); updates != 1 || seq != seq0+3 {
		t.Fatalf("after a closing of 2 new events, 1 stored one and the audit row: %d head updates, head moved by %d; want 1 and 3", updates, seq-seq0)
	}
	if err := s.AppendClosing(ctx, "d1", []store.Event{{Seq: 4, At: at, Type: store.EventWithdrawn}}, item); err != nil { // the row is stored: skipped
		t.Fatal(err)
	}
	if updates, seq := state(); updates != 2 || seq != seq0+4 {
		t.Fatalf("after a closing of 1 new event and a stored audit row: %d head updates, head moved by %d; want 2 and 4", updates, seq-seq0)
	}
	if err := s.AppendEvents(ctx, "d1", []store.Event{{Seq: 4, At: at, Type: store.EventWithdrawn}}); err != nil {
		t.Fatal(err)
	}
	if updates, seq := state(); updates != 2 || seq != seq0+4 {
		t.Fatalf("after a write of stored rows only: %d head updates, head moved by %d; want 2 and 4 (unchanged)", updates, seq-seq0)
	}
	rec, err := s.Get(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 4 || rec.Events[0].Type != store.EventOpened {
		t.Fatalf("journal %+v: want the first opened event kept and 4 events", rec.Events)
	}
	head, rows, err := s.ChainState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := store.VerifyChain(head, rows); err != nil || n != 1+1+4+1 { // the anchor, the lane's registration, 4 events, the audit row
		t.Fatalf("chain: %d rows, %v; want 7 verified", n, err)
	}
}
