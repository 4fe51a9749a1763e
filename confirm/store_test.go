package confirm_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

func TestDefaultStatePath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if p, _ := confirm.DefaultStatePath(); p != "/x/state/acpmux/state.db" {
		t.Fatalf("got %s", p)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if p, _ := confirm.DefaultStatePath(); p != "/home/u/.local/state/acpmux/state.db" {
		t.Fatalf("got %s", p)
	}
}

func TestStorePersistsDecision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	s, err := confirm.OpenStore(path)
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

	s2, err := confirm.OpenStore(path)
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
	if rec.Status != confirm.StatusAnswered || rec.Answer.OptionID != "allow-once" || rec.ResolvedBy != "http" ||
		rec.DeliveredAt.IsZero() || string(rec.Snapshot.Request) != string(d.Params()) ||
		rec.Snapshot.DisplayedTextSHA256 != d.Snapshot().DisplayedTextSHA256 {
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
	if err != nil || v.Status != confirm.StatusAnswered || len(v.Events) == 0 {
		t.Fatalf("view %+v err %v", v, err)
	}
	if _, deduped, err := b2.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once"}); err != nil || !deduped {
		t.Fatalf("same answer after restart: deduped %v err %v", deduped, err)
	}
	if _, _, err := b2.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "reject-once"}); !errors.Is(err, confirm.ErrConflict) {
		t.Fatalf("other answer after restart: %v", err)
	}
	if _, err := b2.Decision(context.Background(), "other", d.ID()); !errors.Is(err, confirm.ErrNotFound) {
		t.Fatalf("wrong session: %v", err)
	}
	vs, err := b2.Decisions(context.Background(), "s")
	if err != nil || len(vs) != 1 || vs[0].ID != d.ID() {
		t.Fatalf("list %+v err %v", vs, err)
	}
}

// A process dies with a decision open: the next OpenStore cancels it with
// reason bridge_restart, and its late answer is refused.
func TestRestartCancelsLeftOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := confirm.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newBroker(t, confirm.Options{Store: s})
	ide := newHost("ide")
	ch := ask(b, req("s", "k"), ide)
	d := ide.wait(t)

	// A second live store on the same file (another acpmux) leaves it alone.
	other, err := confirm.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if other.Recovered() != 0 {
		t.Fatal("a live process's decision was cancelled")
	}
	other.Close()

	s.Close() // the "crash": the first process's store goes away with the row open
	s2, err := confirm.OpenStore(path)
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
	if rec.Status != confirm.StatusCancelled || rec.Reason != confirm.ReasonBridgeRestart ||
		last.Type != confirm.EventCancelled || last.Detail != confirm.ReasonBridgeRestart {
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

func TestRestartCancelsRowOfDeadProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := confirm.OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, "/", "_")
	confirm.ForgeOwnerForTest(s, host+"/"+strconv.Itoa(cmd.Process.Pid)+"/deadbeef")
	now := time.Now()
	rec := confirm.Record{ID: "d1", Snapshot: confirm.Snapshot{SessionID: "s", AgentKey: "k", Request: []byte(`{}`)},
		Status: confirm.StatusOpen, CreatedAt: now, Deadline: now.Add(time.Hour),
		Events: []confirm.Event{{Seq: 1, At: now, Type: confirm.EventOpened}}}
	if _, created, err := s.Insert(context.Background(), rec); err != nil || !created {
		t.Fatalf("insert: %v %v", created, err)
	}
	s.Close()
	liveOther, err := confirm.OpenStore(path) // stays open: must not matter
	if err != nil {
		t.Fatal(err)
	}
	defer liveOther.Close()
	if liveOther.Recovered() != 1 {
		t.Fatalf("recovered %d, want 1 (owner process exited)", liveOther.Recovered())
	}
}

func TestStoreClaimOnce(t *testing.T) {
	s := fileStore(t)
	now := time.Now()
	rec := confirm.Record{ID: "d1", Snapshot: confirm.Snapshot{SessionID: "s", AgentKey: "k", Request: []byte(`{"a":1}`)},
		Status: confirm.StatusOpen, CreatedAt: now, Deadline: now.Add(time.Minute),
		Events: []confirm.Event{{Seq: 1, At: now, Type: confirm.EventOpened}}}
	ctx := context.Background()
	if _, created, err := s.Insert(ctx, rec); err != nil || !created {
		t.Fatal(created, err)
	}
	if got, created, err := s.Insert(ctx, rec); err != nil || created || got.ID != "d1" {
		t.Fatalf("second insert: %v %v", created, err)
	}
	results := make(chan bool, 50)
	for i := range 50 {
		go func() {
			won, err := s.Claim(ctx, "d1", confirm.Transition{Status: confirm.StatusAnswered,
				Answer: &confirm.Answer{OptionID: strconv.Itoa(i)}, By: "h" + strconv.Itoa(i), Reason: confirm.ReasonAnswered, At: time.Now(),
				Event: confirm.Event{Seq: 2, At: time.Now(), Type: confirm.EventAnswered, Host: "h" + strconv.Itoa(i)}})
			if err != nil {
				t.Error(err)
			}
			results <- won
		}()
	}
	wins := 0
	for range 50 {
		if <-results {
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%d claims won, want 1", wins)
	}
	got, _ := s.Get(ctx, "d1")
	if got.Status != confirm.StatusAnswered || len(got.Events) != 2 || got.Events[1].Host != got.ResolvedBy {
		t.Fatalf("record %+v", got)
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, confirm.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
}
