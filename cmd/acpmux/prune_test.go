package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// seedState writes to a new store file one decision closed age ago and
// one still open (created as long ago), and returns the file.
func seedState(t *testing.T, age time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	at := time.Now().Add(-age)
	for _, id := range []string{"closed", "open"} {
		rec := store.Record{ID: id, SessionID: "s", AgentKey: id, Request: []byte(`{}`), Snapshot: json.RawMessage(`{}`),
			Status: store.StatusOpen, CreatedAt: at, Deadline: time.Now().Add(time.Hour), Events: []store.Event{{Seq: 1, At: at, Type: store.EventOpened}}}
		if _, _, err := st.Insert(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if won, err := st.Claim(ctx, "closed", store.Transition{Status: store.StatusTimedOut, Reason: store.ReasonTimeout, At: at,
		Event: store.Event{Seq: 2, At: at, Type: store.EventTimedOut}}); !won || err != nil {
		t.Fatal(won, err)
	}
	return path
}

// kept reports which of the seeded decisions are still in the store.
func kept(t *testing.T, path string) []string {
	t.Helper()
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for _, id := range []string{"closed", "open"} {
		if _, err := st.Get(context.Background(), id); err == nil {
			ids = append(ids, id)
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
	}
	return ids
}

// TestPruneCommand: acpmux prune --before a date after the closing deletes
// the closed decision and keeps the open one, and deletes the registry row
// of a bridge gone before that date with no decision ("bridges" in
// --json); --retain 30d does not touch a decision closed 10 days ago.
func TestPruneCommand(t *testing.T) {
	path := seedState(t, 10*24*time.Hour)
	if st, err := sqlite.Open(path); err != nil {
		t.Fatal(err)
	} else {
		gone := time.Now().Add(-10 * 24 * time.Hour)
		err := st.RegisterBridge(context.Background(), store.Bridge{ID: "gone", Name: "gone", Host: "box", Agent: []string{"a"},
			Cwd: "/", PID: 1, Started: gone, Heartbeat: gone})
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	var out, errb strings.Builder
	if code := Main([]string{"prune", "--state", path, "--retain", "30d"}, stdio{strings.NewReader(""), &out, &errb}); code != 0 {
		t.Fatalf("prune --retain 30d: %d %s", code, errb.String())
	}
	if got := kept(t, path); len(got) != 2 {
		t.Fatalf("after prune --retain 30d: %v, want both (closed 10 days ago)", got)
	}
	out.Reset()
	day := time.Now().Add(-5 * 24 * time.Hour).Format(time.DateOnly)
	if code := Main([]string{"prune", "--state", path, "--before", day, "--json"}, stdio{strings.NewReader(""), &out, &errb}); code != 0 {
		t.Fatalf("prune --before %s: %d %s", day, code, errb.String())
	}
	var res struct{ Decisions, Feed, Bridges int }
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Decisions != 1 || res.Bridges != 1 {
		t.Fatalf("prune --json: %q, err %v; want 1 decision and 1 bridge", out.String(), err)
	}
	if got := kept(t, path); len(got) != 1 || got[0] != "open" {
		t.Fatalf("after prune --before %s: %v, want only the open decision", day, got)
	}
	if code := Main([]string{"prune", "--state", path, "--before", "last week"}, stdio{strings.NewReader(""), &out, &errb}); code != 2 {
		t.Fatalf("prune --before 'last week': %d, want 2", code)
	}
}

// TestRunPrunesAtStart: acpmux run with the default --retain (30d) has
// deleted, once it listens, a decision closed 40 days ago, and kept the
// open one; --retain 0 keeps everything.
func TestRunPrunesAtStart(t *testing.T) {
	path := seedState(t, 40*24*time.Hour)
	startRelayProcess(t, permAgentScript, "--state", path, "--retain", "0")
	if got := kept(t, path); len(got) != 2 {
		t.Fatalf("with --retain 0: %v, want both", got)
	}
	startRelayProcess(t, permAgentScript, "--state", path)
	if got := kept(t, path); len(got) != 1 || got[0] != "open" {
		t.Fatalf("after acpmux run started: %v, want only the open decision", got)
	}
}

func TestParseRetain(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "12h": 12 * time.Hour, "0": 0, "1d": 24 * time.Hour} {
		if got, err := parseRetain(in); err != nil || got != want {
			t.Errorf("parseRetain(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1d", "xd", "3 days", "-5m"} {
		if _, err := parseRetain(in); err == nil {
			t.Errorf("parseRetain(%q) accepted", in)
		}
	}
}
