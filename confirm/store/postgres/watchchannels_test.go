package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestNotifyWakesOnlyTheProcessConcerned: of three store instances on one
// database (three bridges), a claim through b of a decision a opened wakes
// a's Watch and not c's, and a's delivery of it wakes neither b's (the
// claimer reads it: Settled) nor c's. NOTIFYs arrive in commit order, so b
// and c seeing a later change of their own, and never a's decision before
// it, shows a's delivery was not sent to them.
func TestNotifyWakesOnlyTheProcessConcerned(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	a, b, c := open(t, url), open(t, url), open(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch := func(s *postgres.Store) chan string {
		ids := make(chan string, 1000)
		go s.Watch(ctx, func(id string) { ids <- id })
		return ids
	}
	aw, bw, cw := watch(a), watch(b), watch(c)
	at := time.Now().UTC()
	n := 0
	claim := func(opener, claimer *postgres.Store) string {
		t.Helper()
		n++
		id := fmt.Sprint("d", n)
		if _, created, err := opener.Insert(ctx, store.Record{ID: id, SessionID: "s", AgentKey: id, Request: []byte(`{}`),
			Snapshot: json.RawMessage(`{}`), Status: store.StatusOpen, CreatedAt: at, Deadline: at.Add(time.Hour),
			Events: []store.Event{{Seq: 1, At: at, Type: store.EventOpened}}}); err != nil || !created {
			t.Fatalf("insert %s: %v %v", id, created, err)
		}
		if won, err := claimer.Claim(ctx, id, store.Transition{Status: store.StatusAnswered, Answer: &store.Answer{OptionID: "allow"},
			By: "http@B", Reason: store.ReasonAnswered, At: at}); err != nil || !won {
			t.Fatalf("claim %s: %v %v", id, won, err)
		}
		return id
	}
	// await reads ids until want, failing on an id of forbidden.
	await := func(who string, ids chan string, want string, forbidden ...string) {
		t.Helper()
		for {
			select {
			case got := <-ids:
				if got == want {
					return
				}
				for _, f := range forbidden {
					if got == f {
						t.Fatalf("%s's Watch was woken for %s, a decision it neither opened nor claimed", who, f)
					}
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s's Watch never saw %s", who, want)
			}
		}
	}
	// Each watch listens once it saw a change of its own (LISTEN runs
	// when Watch starts).
	for _, w := range []struct {
		who    string
		s      *postgres.Store
		ids    chan string
		claims *postgres.Store
	}{{"a", a, aw, b}, {"b", b, bw, a}, {"c", c, cw, b}} {
		for i := 0; ; i++ {
			claim(w.s, w.claims)
			select {
			case <-w.ids:
			case <-time.After(100 * time.Millisecond):
				if i < 50 {
					continue
				}
				t.Fatalf("%s's Watch never listened", w.who)
			}
			break
		}
	}

	mine := claim(a, b) // a opened it, b claimed it
	await("a", aw, mine)
	if err := a.Append(ctx, mine, store.Event{Seq: 2, At: at, Type: store.EventDelivered}); err != nil {
		t.Fatal(err)
	}
	if recs, err := b.Settled(ctx, []string{mine}); err != nil || len(recs) != 1 || recs[0].DeliveredAt.IsZero() {
		t.Fatalf("b reads its claim of %s as %+v, %v: want it delivered", mine, recs, err)
	}
	later := claim(b, a) // committed after every change of mine
	await("b", bw, later, mine)
	later = claim(c, b)
	await("c", cw, later, mine)
}
