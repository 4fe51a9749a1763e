package confirm_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// readCounting is a PostgreSQL store that counts reads of one decision.
type readCounting struct {
	*postgres.Store
	gets atomic.Int32
}

func (r *readCounting) Get(ctx context.Context, id string) (store.Record, error) {
	r.gets.Add(1)
	return r.Store.Get(ctx, id)
}

// TestOwnerSettlesAClaimFromItsNotification: on PostgreSQL, bridge A
// settles the answer bridge B claimed from the claim's NOTIFY payload,
// without reading the decision back, and its agent gets that option.
func TestOwnerSettlesAClaimFromItsNotification(t *testing.T) {
	owner, a, b, url := claimingBridges(t, 0, nil)
	n := answerFromB(t, owner, a, b, url)
	if n != 0 {
		t.Fatalf("the owner read the decision %d times to settle a claim its notification carried", n)
	}
}

// TestOwnerRereadsAnOldClaim: a claim's notification older than half the
// lease (here by the owner's clock, as after a suspend) is not trusted: the
// owner reads the row, where the store may have voided the claim as
// owner_lost meanwhile, and settles with what the row says.
func TestOwnerRereadsAnOldClaim(t *testing.T) {
	late := func() time.Time { return time.Now().Add(time.Hour) } // the owner's clock, an hour after the claim
	owner, a, b, url := claimingBridges(t, time.Hour, late)
	if n := answerFromB(t, owner, a, b, url); n == 0 {
		t.Fatal("the owner settled a claim older than half the lease from its notification without reading the row")
	}
}

// claimingBridges starts bridges A (the owner, whose store counts reads,
// with clock now when not nil) and B on one throwaway PostgreSQL, both
// running RunShared with a heartbeat of an hour (no sweep reads rows
// meanwhile) and lease (0: the default).
func claimingBridges(t *testing.T, lease time.Duration, now func() time.Time) (owner *readCounting, a, b *confirm.Broker, url string) {
	t.Helper()
	url = pgtest.Start(t).Database(t)
	openPG := func() *postgres.Store {
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	run := func(br *confirm.Broker, id string) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = br.RunShared(ctx, confirm.SharedOptions{Heartbeat: time.Hour, Lease: lease,
				Bridge: store.Bridge{ID: id, Started: time.Now(), Heartbeat: time.Now()}})
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	owner = &readCounting{Store: openPG()}
	a = newBroker(t, confirm.Options{Store: owner, BridgeID: "A", Now: now})
	b = newBroker(t, confirm.Options{Store: openPG(), BridgeID: "B"})
	run(a, "A")
	run(b, "B")
	return owner, a, b, url
}

// answerFromB asks a permission at A, answers it from B once both watches
// listen (a missed NOTIFY would be settled only at the next heartbeat),
// checks that A's asker gets B's option, and returns how often A read the
// decision from its store.
func answerFromB(t *testing.T, owner *readCounting, a, b *confirm.Broker, url string) int32 {
	t.Helper()
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	waitListening(t, url, 2)
	if _, _, err := b.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatalf("answer from B: %v", err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	return owner.gets.Load()
}

// waitListening returns once n sessions of the database at url listen.
func waitListening(t *testing.T, url string, n int) {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for range 500 {
		var got int
		if err := c.QueryRow(context.Background(), `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN %' AND state = 'idle'`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("fewer than %d watches listen", n)
}
