package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// claimAfterEarlierDelivery: a decision whose owner's closing failed to
// store stays open with its delivered event (the agent got the owner's
// outcome); a claim that then wins reads undelivered, so that neither its
// claimer nor a view reports it delivered to the agent, and a delivery
// after the claim sets DeliveredAt again.
func claimAfterEarlierDelivery(t *testing.T, s store.Store) {
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Millisecond)
	insert(t, s, openRecord("d1", "s1", at))
	if err := s.Append(ctx, "d1", store.Event{Seq: 2, At: at, Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	won, err := s.Claim(ctx, "d1", store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
		By: "http@b", Reason: store.ReasonAnswered, At: at.Add(time.Second)})
	if err != nil || !won {
		t.Fatalf("claim: won %v, err %v", won, err)
	}
	rec, err := s.Get(ctx, "d1")
	if err != nil || rec.Status != store.StatusAnswered || !rec.DeliveredAt.IsZero() {
		t.Fatalf("after the claim: %s delivered %v, %v; want answered and not delivered", rec.Status, rec.DeliveredAt, err)
	}
	if err := s.Append(ctx, "d1", store.Event{Seq: 3, At: at.Add(2 * time.Second), Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Get(ctx, "d1"); err != nil || !rec.DeliveredAt.Equal(at.Add(2*time.Second)) {
		t.Fatalf("after the claim's delivery: delivered %v, %v", rec.DeliveredAt, err)
	}
}
