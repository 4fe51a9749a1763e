package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestClaimNotifyCarriesTheOutcome: the owner's WatchClaims receives with
// a claim by another instance the outcome that claim stored (the same as
// reading the row back), and for an answer too long for a NOTIFY payload
// the id alone (claimed nil: the owner reads the row).
func TestClaimNotifyCarriesTheOutcome(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	owner, claimer := open(t, url), open(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type change struct {
		id      string
		claimed *store.Record
	}
	got := make(chan change, 100)
	go owner.WatchClaims(ctx, func(id string, claimed *store.Record) { got <- change{id, claimed} })
	at := time.Now().UTC()
	n := 0
	claim := func(text string) string {
		t.Helper()
		n++
		id := "d" + strings.Repeat("x", n)
		if _, created, err := owner.Insert(ctx, store.Record{ID: id, SessionID: "s", AgentKey: id, Request: []byte(`{}`),
			Snapshot: json.RawMessage(`{}`), Status: store.StatusOpen, CreatedAt: at, Deadline: at.Add(time.Hour),
			Events: []store.Event{{Seq: 1, At: at, Type: store.EventOpened}}}); err != nil || !created {
			t.Fatalf("insert %s: %v %v", id, created, err)
		}
		if won, err := claimer.Claim(ctx, id, store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow", Text: text},
			By: "http@inbox", Person: "ana", Reason: store.ReasonAnswered, At: at}); err != nil || !won {
			t.Fatalf("claim %s: %v %v", id, won, err)
		}
		return id
	}
	await := func(id string) *store.Record {
		t.Helper()
		for {
			select {
			case c := <-got:
				if c.id == id {
					return c.claimed
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the owner's watch never saw the claim of %s", id)
			}
		}
	}
	// The watch listens once it saw a claim (LISTEN runs when it starts).
	for i := 0; ; i++ {
		claim("")
		select {
		case <-got:
		case <-time.After(100 * time.Millisecond):
			if i < 50 {
				continue
			}
			t.Fatal("the owner's watch never listened")
		}
		break
	}
	id := claim("free text")
	claimed := await(id)
	rec, err := owner.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if claimed == nil || claimed.ID != id || claimed.Status != rec.Status || *claimed.Answer != *rec.Answer ||
		claimed.ResolvedBy != rec.ResolvedBy || claimed.Person != rec.Person || claimed.Reason != rec.Reason || !claimed.ClosedAt.Equal(rec.ClosedAt) {
		t.Fatalf("the claim's notification carried %+v; the row holds %+v", claimed, rec)
	}
	long := claim(strings.Repeat("y", 9000))
	if claimed := await(long); claimed != nil {
		t.Fatalf("an answer longer than a NOTIFY payload was notified with its outcome %+v, not by id", claimed)
	}
}

// TestBadNotifyPayloadFailsClosed: a payload that is not a claim's outcome
// never becomes one: JSON that does not parse or names no decision means
// "look at every decision" (id ""), and a claim payload of anything but an
// answer names its decision only (the owner reads the row).
func TestBadNotifyPayloadFailsClosed(t *testing.T) {
	for _, tc := range []struct{ payload, id string }{
		{`d1`, "d1"},
		{`{"id":"d1"`, ""},
		{`{"status":"answered","option":"allow","text":""}`, ""},
		{`{"id":"d1","status":"cancelled","reason":"stale"}`, "d1"},
		{`{"id":"d1","status":"open","option":"allow","text":""}`, "d1"},
		{`{"id":"d1","status":"answered","text":""}`, "d1"},
	} {
		id, claimed := postgres.ParseNotice(tc.payload)
		if id != tc.id || claimed != nil {
			t.Errorf("payload %s: id %q, outcome %+v; want id %q and no outcome", tc.payload, id, claimed, tc.id)
		}
	}
	id, claimed := postgres.ParseNotice(`{"id":"d1","status":"answered","option":"allow","text":"","by":"http@inbox","reason":"answered","at":5}`)
	if id != "d1" || claimed == nil || claimed.Answer.OptionID != "allow" || claimed.ResolvedBy != "http@inbox" {
		t.Errorf("a claim's payload: id %q, outcome %+v", id, claimed)
	}
}
