package confirm_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// lonePlanItems is a store that counts audit rows written on their own.
type lonePlanItems struct {
	*sqlite.Store
	alone atomic.Int32
}

func (s *lonePlanItems) InsertPlanItem(ctx context.Context, it store.PlanItem) error {
	s.alone.Add(1)
	return s.Store.InsertPlanItem(ctx, it)
}

// TestAuditRowStoredWithTheClosingEvents: a decision answered by a host is
// stored with its answer and its audit row in one write
// (store.ClosingAppender), not the row on its own; the row is there.
func TestAuditRowStoredWithTheClosingEvents(t *testing.T) {
	s := &lonePlanItems{Store: memStore(t)}
	b := newBroker(t, confirm.Options{Store: s})
	ide, page := newHost("ide"), newHost("page")
	ch := ask(b, req("s", "k"), ide, page)
	d := ide.wait(t)
	page.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	jsonEq(t, await(t, ch).result, selected("allow-once"))
	items, err := b.PlanItems(context.Background(), "s", 0)
	if err != nil || len(items) != 1 || items[0].ID != d.ID() || items[0].OptionID != "allow-once" {
		t.Fatalf("audit rows: %+v, %v", items, err)
	}
	if n := s.alone.Load(); n != 0 {
		t.Fatalf("the audit row was written on its own (%d writes), not with the closing events", n)
	}
	rec, err := s.Get(context.Background(), d.ID())
	if err != nil {
		t.Fatal(err)
	}
	var answered, withdrawn bool
	for _, ev := range rec.Events {
		answered = answered || ev.Type == store.EventAnswered
		withdrawn = withdrawn || (ev.Type == store.EventWithdrawn && ev.Host == "page")
	}
	if !answered || !withdrawn {
		t.Fatalf("closing events stored: %+v", rec.Events)
	}
}
