package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// A run that ends while its bridge still registers in the shared store
// (an IDE starting and stopping the agent at once) logs no ERROR: the
// context ending is the shutdown, not a failure of the shared store.
func TestSharedStoreEndingAtShutdownIsNoError(t *testing.T) {
	st, err := openState(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	b, err := confirm.NewBroker(confirm.Options{Store: st, BridgeID: "b1", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{log: log, broker: b, store: st, shared: sharedBridge(st, "test", []string{"agent"})}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	select {
	case <-r.runShared(ctx):
	case <-time.After(30 * time.Second):
		t.Fatal("runShared did not return after its context ended")
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("an ERROR line at shutdown:\n%s", logs.String())
	}
}
