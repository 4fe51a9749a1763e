package sqlite_test

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

	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
	"github.com/acpmux/acpmux/confirm/store/storetest"
)

// TestConformance runs the store conformance suite on an in-memory and on
// a file database.
func TestConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return open(t, sqlite.MemoryPath) })
	})
	t.Run("file", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store { return open(t, filepath.Join(t.TempDir(), "state.db")) })
	})
}

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestDefaultStatePath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if p, _ := sqlite.DefaultPath(); p != "/x/state/acpmux/state.db" {
		t.Fatalf("got %s", p)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if p, _ := sqlite.DefaultPath(); p != "/home/u/.local/state/acpmux/state.db" {
		t.Fatalf("got %s", p)
	}
}

func TestRestartCancelsRowOfDeadProcess(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, "/", "_")
	sqlite.ForgeOwnerForTest(s, host+"/"+strconv.Itoa(cmd.Process.Pid)+"/deadbeef")
	now := time.Now()
	rec := store.Record{ID: "d1", Snapshot: []byte(`{}`), SessionID: "s", AgentKey: "k", Request: []byte(`{}`),
		Status: store.StatusOpen, CreatedAt: now, Deadline: now.Add(time.Hour),
		Events: []store.Event{{Seq: 1, At: now, Type: store.EventOpened}}}
	if _, created, err := s.Insert(context.Background(), rec); err != nil || !created {
		t.Fatalf("insert: %v %v", created, err)
	}
	s.Close()
	liveOther, err := sqlite.Open(path) // stays open: must not matter
	if err != nil {
		t.Fatal(err)
	}
	defer liveOther.Close()
	if liveOther.Recovered() != 1 {
		t.Fatalf("recovered %d, want 1 (owner process exited)", liveOther.Recovered())
	}
}

// TestConformanceShared runs the two-instance contracts on two stores
// opened on one file, as two acpmux processes on one machine.
func TestConformanceShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (store.Store, store.Store) {
		path := filepath.Join(t.TempDir(), "state.db")
		return open(t, path), open(t, path)
	})
}

// TestRegistryConformance runs the registry conformance suite on an
// in-memory database and on two stores opened on one file.
func TestRegistryConformance(t *testing.T) {
	storetest.RunRegistry(t, func(t *testing.T) store.Registry { return open(t, sqlite.MemoryPath) },
		func(t *testing.T) (store.Registry, store.Registry) {
			path := filepath.Join(t.TempDir(), "state.db")
			return open(t, path), open(t, path)
		})
}

// TestNewerSchemaIsRefused: a file whose schema_version is beyond what
// this acpmux knows is not opened, with ErrSchemaTooNew.
func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	sqlite.SetSchemaVersionForTest(t, open(t, path), 99)
	_, err := sqlite.Open(path)
	if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("open of a newer schema: %v, want ErrSchemaTooNew naming version 99", err)
	}
}

// TestFeedConformance runs the feed and prune conformance suite on an
// in-memory database, and on a file shared by two instances.
func TestFeedConformance(t *testing.T) {
	storetest.RunFeed(t, func(t *testing.T) storetest.FeedStore { return open(t, sqlite.MemoryPath) },
		func(t *testing.T) (storetest.FeedStore, storetest.FeedStore) {
			p := filepath.Join(t.TempDir(), "state.db")
			return open(t, p), open(t, p)
		})
}
