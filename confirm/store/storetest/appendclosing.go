package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// appendClosingInOneWrite: [store.ClosingAppender] journals a decision's
// closing events and writes its audit row, the hash chain unbroken; a
// write naming an unknown decision stores neither its events nor its row,
// and a delivered event among the closing ones sets the decision's
// DeliveredAt, as Append does.
func appendClosingInOneWrite(t *testing.T, s store.Store) {
	ca, ok := s.(store.ClosingAppender)
	if !ok {
		t.Skip("the store does not write closing events and the audit row in one write")
	}
	ctx := context.Background()
	at := time.Now().UTC()
	insert(t, s, openRecord("d1", "s", at))
	evs := []store.Event{
		{Seq: 2, At: at, Type: store.EventAnswered, Host: "http@B", Detail: "allow"},
		{Seq: 3, At: at, Type: store.EventWithdrawn, Host: "page"},
	}
	if err := ca.AppendClosing(ctx, "d1", evs, store.PlanItem{ID: "d1", SessionID: "s", DecidedAt: at, Item: json.RawMessage(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Get(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 3 || rec.Events[1].Type != store.EventAnswered || rec.Events[2].Host != "page" || !rec.DeliveredAt.IsZero() {
		t.Fatalf("after AppendClosing: delivered %v, events %+v", rec.DeliveredAt, rec.Events)
	}
	if items, err := s.PlanItems(ctx, "s", 10); err != nil || len(items) != 1 || items[0].ID != "d1" || string(items[0].Item) != `{"n":1}` {
		t.Fatalf("audit rows after AppendClosing: %+v, %v", items, err)
	}
	if err := ca.AppendClosing(ctx, "nope", evs, store.PlanItem{ID: "nope", SessionID: "s2", DecidedAt: at, Item: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("AppendClosing for an unknown decision: no error")
	}
	if items, err := s.PlanItems(ctx, "s2", 10); err != nil || len(items) != 0 {
		t.Fatalf("a failed AppendClosing stored its audit row: %+v, %v", items, err)
	}
	insert(t, s, openRecord("d2", "s", at))
	if err := ca.AppendClosing(ctx, "d2", []store.Event{{Seq: 2, At: at, Type: store.EventAnswered, Host: "ide"}, {Seq: 3, At: at, Type: store.EventDelivered}},
		store.PlanItem{ID: "d2", SessionID: "s3", DecidedAt: at, Item: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Get(ctx, "d2"); err != nil || len(rec.Events) != 3 || rec.Events[2].Type != store.EventDelivered || !rec.DeliveredAt.Equal(at) {
		t.Fatalf("after AppendClosing with a delivered event: delivered %v, events %+v, %v", rec.DeliveredAt, rec.Events, err)
	}
	if c, ok := s.(store.Chain); ok {
		head, rows, err := c.ChainState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := store.VerifyChain(head, rows); err != nil || n != 3+1+3+1+1+int64(len(head.Lanes)) { // d1's 3 events, its row, d2's 3 events, its row, the anchor, each lane's registration
			t.Fatalf("chain after AppendClosing: %d rows, %v", n, err)
		}
	}
}
