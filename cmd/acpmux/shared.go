package main

import (
	"context"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
)

// sharedBridge returns this bridge's registry row when st can be shared by
// several bridges (a SQLite file or PostgreSQL, not :memory:): a fresh
// random id (a restarted bridge is a new bridge and never adopts the
// decisions of the one before), --name, the host name, the agent argv,
// the working directory, the pid and the start time. The zero row when
// st is not shared.
func sharedBridge(st stateStore, name string, argv []string) store.Bridge {
	if _, ok := st.(store.Shared); !ok || !st.Durable() {
		return store.Bridge{}
	}
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	now := time.Now().UTC()
	return store.Bridge{ID: uuid.NewString(), Name: name, Host: host, Agent: append([]string(nil), argv...),
		Cwd: cwd, PID: os.Getpid(), Started: now, Heartbeat: now}
}

// runShared runs the broker's part in the shared store (registration,
// logged "bridge registered in the shared store" once the row is stored,
// heartbeat every 2s, owner_lost sweep with a 10s lease, settling answers
// from other processes, the stop recorded at the end) until ctx ends; the
// channel closes when it returned.
func (r *relay) runShared(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if r.shared.ID == "" {
		close(done)
		return done
	}
	registered := func() {
		r.log.Info("bridge registered in the shared store", "bridge", r.shared.ID, "name", r.shared.Name, "state", r.store.Path())
	}
	go func() {
		defer close(done)
		// An error after ctx ended is the shutdown itself (a run that ends
		// while it still registers), not a failure worth an ERROR line.
		if err := r.broker.RunShared(ctx, confirm.SharedOptions{Bridge: r.shared, Registered: registered}); err != nil && ctx.Err() == nil {
			r.log.Error("shared store: this bridge's decisions cannot be answered by other bridges", "err", err)
		}
	}()
	return done
}
