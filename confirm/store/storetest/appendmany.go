package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// appendManyInOneWrite: [store.EventsAppender] journals several events of
// one decision in order, a delivered one also setting DeliveredAt, and the
// hash chain stays unbroken; a batch naming an unknown decision writes
// none of its events.
func appendManyInOneWrite(t *testing.T, s store.Store) {
	ea, ok := s.(store.EventsAppender)
	if !ok {
		t.Skip("the store does not append several events in one write")
	}
	ctx := context.Background()
	at := time.Now().UTC()
	insert(t, s, openRecord("d1", "s", at))
	evs := []store.Event{
		{Seq: 2, At: at, Type: store.EventAnswered, Host: "http@B", Detail: "allow"},
		{Seq: 3, At: at, Type: store.EventWithdrawn, Host: "page"},
		{Seq: 4, At: at.Add(time.Millisecond), Type: store.EventDelivered},
	}
	if err := ea.AppendEvents(ctx, "d1", evs); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Get(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 4 || rec.Events[1].Type != store.EventAnswered || rec.Events[2].Host != "page" ||
		rec.Events[3].Type != store.EventDelivered || !rec.DeliveredAt.Equal(at.Add(time.Millisecond)) {
		t.Fatalf("after AppendEvents: delivered %v, events %+v", rec.DeliveredAt, rec.Events)
	}
	if err := ea.AppendEvents(ctx, "nope", evs[:2]); err == nil {
		t.Fatal("AppendEvents for an unknown decision: no error")
	}
	if c, ok := s.(store.Chain); ok {
		head, rows, err := c.ChainState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := store.VerifyChain(head, rows); err != nil || n != 4+1+int64(len(head.Lanes)) { // 4 events, the anchor, each lane's registration
			t.Fatalf("chain after AppendEvents: %d rows, %v", n, err)
		}
	}
}
