package confirm_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestInboxOnPostgresReadsItsClaimsWithoutListening: on PostgreSQL an
// inbox (a broker that owns no decisions) running RunShared holds no
// LISTEN session, so the owner's delivery NOTIFYs nobody and no commit
// wakes it; its answer to bridge A's decision still returns once A
// delivered it, with delivered true, and A's agent gets that option.
func TestInboxOnPostgresReadsItsClaimsWithoutListening(t *testing.T) {
	url := pgtest.Start(t).Database(t)
	openPG := func() store.Store {
		s, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := func(br *confirm.Broker, id string) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = br.RunShared(ctx, confirm.SharedOptions{Bridge: store.Bridge{ID: id}})
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	a := newBroker(t, confirm.Options{Store: openPG(), BridgeID: "A"})
	inbox := newBroker(t, confirm.Options{Store: openPG(), Inbox: true})
	run(a, "A")
	run(inbox, "")
	ide := newHost("ide")
	ch := ask(a, req("sess-1", "k"), ide)
	d := ide.wait(t)
	waitListening(t, url, 1) // A's watch
	v, _, err := inbox.Answer(context.Background(), "sess-1", d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	if err != nil || v.Status != store.StatusAnswered || !v.Delivered {
		t.Fatalf("inbox answer: %+v %v, want answered and delivered", v, err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var listening int
	if err := c.QueryRow(context.Background(), `SELECT COUNT(*) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&listening); err != nil {
		t.Fatal(err)
	}
	if listening != 1 {
		t.Fatalf("%d sessions LISTEN, want 1 (bridge A's; the inbox reads)", listening)
	}
}
