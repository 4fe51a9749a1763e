package main

import (
	"context"
	"os"
	"syscall"
	"testing"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/confirm/store"
)

// TestAStoppedBridgeIsRecordedStopped: per store kind, acpmux run on a
// shared store stopped with SIGTERM (as Ctrl-C or a service manager stops
// it) records its stop in its registry row before it exits, so that the
// other bridges and the inbox show it not live at once instead of once
// its lease ran out.
func TestAStoppedBridgeIsRecordedStopped(t *testing.T) {
	for kind, newState := range sharedStates(t) { // inbox_test.go
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			state := newState(t)
			file := t.TempDir() + "/agent.script"
			if err := os.WriteFile(file, []byte("waiteof\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			b := startBridge(t, state, "alpha", []string{acptest.EnvScript + "=@" + file}, os.Args[0])
			if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			_ = b.cmd.Wait()
			st, err := openState(state)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			all, err := st.(store.Registry).Bridges(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, br := range all {
				if br.ID == b.id {
					if br.Stopped.IsZero() || br.Stopped.Before(br.Started) {
						t.Fatalf("bridge %s after SIGTERM: %+v; want its stop recorded", b.id, br)
					}
					return
				}
			}
			t.Fatalf("bridge %s not in the registry: %+v", b.id, all)
		})
	}
}
