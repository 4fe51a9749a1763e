package confirm_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

func TestStorePersistsDecision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode: %v %v", fi.Mode(), err)
	}
	b := newBroker(t, confirm.Options{Store: s})
	api := newHost("http")
	ch := ask(b, req("s", "k"), api)
	d := api.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	mem := d.View()
	s.Close()

	s2, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Recovered() != 0 {
		t.Fatalf("recovered %d closed decisions", s2.Recovered())
	}
	rec, err := s2.Get(context.Background(), d.ID())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != store.StatusAnswered || rec.Answer.OptionID != "allow-once" || rec.ResolvedBy != "http" ||
		rec.DeliveredAt.IsZero() || string(rec.Request) != string(d.Params()) ||
		storedSnapshot(t, rec).DisplayedTextSHA256 != d.Snapshot().DisplayedTextSHA256 {
		t.Fatalf("record %+v", rec)
	}
	if len(rec.Events) != len(mem.Events) {
		t.Fatalf("stored journal %d events, memory %d", len(rec.Events), len(mem.Events))
	}
	for i, ev := range rec.Events {
		if ev.Seq != i+1 || ev.Type != mem.Events[i].Type || ev.Host != mem.Events[i].Host || !ev.At.Equal(mem.Events[i].At) {
			t.Fatalf("event %d: stored %+v, memory %+v", i, ev, mem.Events[i])
		}
	}

	// A new broker on the reopened store shows and refuses the old decision.
	b2 := newBroker(t, confirm.Options{Store: s2})
	v, err := b2.Decision(context.Background(), "s", d.ID())
	if err != nil || v.Status != store.StatusAnswered || len(v.Events) == 0 {
		t.Fatalf("view %+v err %v", v, err)
	}
	if _, deduped, err := b2.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil || !deduped {
		t.Fatalf("same answer after restart: deduped %v err %v", deduped, err)
	}
	if _, _, err := b2.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "reject-once"}); !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("other answer after restart: %v", err)
	}
	if _, err := b2.Decision(context.Background(), "other", d.ID()); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("wrong session: %v", err)
	}
	vs, err := b2.Decisions(context.Background(), "s")
	if err != nil || len(vs) != 1 || vs[0].ID != d.ID() {
		t.Fatalf("list %+v err %v", vs, err)
	}
}

// A process dies with a decision open: the next sqlite.Open cancels it with
// reason bridge_restart, and its late answer is refused.
func TestRestartCancelsLeftOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newBroker(t, confirm.Options{Store: s})
	ide := newHost("ide")
	ch := ask(b, req("s", "k"), ide)
	d := ide.wait(t)

	// A second live store on the same file (another acpmux) leaves it alone.
	other, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if other.Recovered() != 0 {
		t.Fatal("a live process's decision was cancelled")
	}
	other.Close()

	s.Close() // the "crash": the first process's store goes away with the row open
	s2, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.Recovered() != 1 {
		t.Fatalf("recovered %d, want 1", s2.Recovered())
	}
	rec, err := s2.Get(context.Background(), d.ID())
	if err != nil {
		t.Fatal(err)
	}
	last := rec.Events[len(rec.Events)-1]
	if rec.Status != store.StatusCancelled || rec.Reason != store.ReasonBridgeRestart ||
		last.Type != store.EventCancelled || last.Detail != string(store.ReasonBridgeRestart) {
		t.Fatalf("record %s %s, last event %+v", rec.Status, rec.Reason, last)
	}
	b2 := newBroker(t, confirm.Options{Store: s2})
	if _, _, err := b2.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("answer after restart: %v", err)
	}
	// The old broker's waiter ends when its agent goes away.
	b.AgentExited()
	jsonEq(t, await(t, ch).result, cancelledResult)
}

// storedSnapshot decodes the snapshot the broker stored with rec.
func storedSnapshot(t *testing.T, rec store.Record) confirm.Snapshot {
	t.Helper()
	var snap confirm.Snapshot
	if err := json.Unmarshal(rec.Snapshot, &snap); err != nil {
		t.Fatalf("stored snapshot %s: %v", rec.Snapshot, err)
	}
	return snap
}
