package confirm_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// beatLog is a bridge's own store that records the times of its
// heartbeats.
type beatLog struct {
	*sqlite.Store
	mu    sync.Mutex
	beats []time.Time
}

// LoseOwners takes 300ms before the sweep, as a store waiting for a lock
// would.
func (l *beatLog) LoseOwners(ctx context.Context, cutoff, at time.Time, audit func(store.Record) (store.PlanItem, bool)) ([]string, error) {
	time.Sleep(300 * time.Millisecond)
	return l.Store.LoseOwners(ctx, cutoff, at, audit)
}

func (l *beatLog) Heartbeat(ctx context.Context, id string, at time.Time) error {
	l.mu.Lock()
	l.beats = append(l.beats, at)
	l.mu.Unlock()
	return l.Store.Heartbeat(ctx, id, at)
}

// TestHeartbeatsOfBridgesStartedTogetherDriftApart: two bridges started
// in the same instant with the same heartbeat period never wait longer
// than the period between beats (the lease's bound), even when each beat
// takes 300ms (its sweep waiting for the store), nor less than 4/5 of it,
// and do not beat in the same instants: at a fixed period their sweeps of
// the store would all come at once.
func TestHeartbeatsOfBridgesStartedTogetherDriftApart(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		const period = time.Second
		ctx, cancel := context.WithCancel(context.Background())
		var logs []*beatLog
		var running sync.WaitGroup
		for _, id := range []string{"A", "B"} {
			// A store each: the beats' timing is the broker's, and two
			// stores on one file would wait for each other's file lock in
			// real time, which the bubble's clock cannot advance.
			s, err := sqlite.Open(filepath.Join(dir, id+".db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			l := &beatLog{Store: s}
			logs = append(logs, l)
			b := newBroker(t, confirm.Options{Store: l, BridgeID: id})
			running.Go(func() {
				if err := b.RunShared(ctx, confirm.SharedOptions{Heartbeat: period,
					Bridge: store.Bridge{ID: id, Started: time.Now(), Heartbeat: time.Now()}}); err != nil {
					t.Error(err)
				}
			})
		}
		start := time.Now()
		time.Sleep(30*period + period/2)
		cancel()
		running.Wait()
		same := 0
		for i, l := range logs {
			if len(l.beats) < 30 {
				t.Fatalf("bridge %d beat %d times in 30 periods, want at least 30", i, len(l.beats))
			}
			last := start
			for _, at := range l.beats {
				if wait := at.Sub(last); wait > period || wait < period*4/5 {
					t.Fatalf("bridge %d waited %v between beats, want from %v to %v", i, wait, period*4/5, period)
				}
				last = at
			}
		}
		for _, a := range logs[0].beats {
			for _, b := range logs[1].beats {
				if a.Equal(b) {
					same++
				}
			}
		}
		if same > len(logs[0].beats)/4 {
			t.Fatalf("%d of %d beats of two bridges came in the same instant", same, len(logs[0].beats))
		}
	})
}

// TestABridgeWhoseRowWasPrunedRegistersAgain: retention deletes the
// registry row of a bridge that has no decision and whose heartbeat is
// older than its cutoff (a bridge suspended longer than --retain); the
// bridge's next heartbeat finds no row and registers it again, with its
// name and start, so that the lost-owner sweep, which reads the registry,
// still covers its decisions.
func TestABridgeWhoseRowWasPrunedRegistersAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	synctest.Test(t, func(t *testing.T) {
		s, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithCancel(context.Background())
		started := time.Now()
		b := newBroker(t, confirm.Options{Store: s, BridgeID: "A"})
		var running sync.WaitGroup
		running.Go(func() {
			if err := b.RunShared(ctx, confirm.SharedOptions{Heartbeat: time.Second,
				Bridge: store.Bridge{ID: "A", Name: "name-A", Started: started, Heartbeat: started}}); err != nil {
				t.Error(err)
			}
		})
		defer func() { cancel(); running.Wait() }()
		time.Sleep(1500 * time.Millisecond)
		res, err := s.Prune(context.Background(), time.Now().Add(time.Hour))
		if err != nil || res.Bridges != 1 {
			t.Fatalf("prune: %+v, %v; want the bridge's row deleted", res, err)
		}
		if got, err := s.Bridges(context.Background()); err != nil || len(got) != 0 {
			t.Fatalf("bridges after the prune: %+v, %v", got, err)
		}
		pruned := time.Now()
		time.Sleep(time.Second) // one period: at least one beat
		got, err := s.Bridges(context.Background())
		if err != nil || len(got) != 1 {
			t.Fatalf("bridges a period after the prune: %+v, %v; want A registered again", got, err)
		}
		if a := got[0]; a.ID != "A" || a.Name != "name-A" || !a.Started.Equal(started.UTC()) || !a.Heartbeat.After(pruned) {
			t.Fatalf("registered again as %+v; want A, name-A, started %v, a heartbeat after %v", a, started, pruned)
		}
	})
}

// refusesFirstRegistration is a bridge's own store that refuses its first
// registration, as a store does for a moment (a failover, a full disk).
type refusesFirstRegistration struct {
	*sqlite.Store
	refused bool
}

func (r *refusesFirstRegistration) RegisterBridge(ctx context.Context, b store.Bridge) error {
	if !r.refused {
		r.refused = true
		return errors.New("the store refused it for a moment")
	}
	return r.Store.RegisterBridge(ctx, b)
}

// TestARefusedRegistrationIsTriedAgain: a bridge whose registration the
// store refuses at start keeps running and registers at its next
// heartbeat (Registered is called then), instead of running without a
// row, which the lost-owner sweep takes for a gone bridge.
func TestARefusedRegistrationIsTriedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	synctest.Test(t, func(t *testing.T) {
		s, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		own := &refusesFirstRegistration{Store: s}
		ctx, cancel := context.WithCancel(context.Background())
		b := newBroker(t, confirm.Options{Store: own, BridgeID: "A"})
		registered := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- b.RunShared(ctx, confirm.SharedOptions{Heartbeat: time.Second,
				Bridge:     store.Bridge{ID: "A", Name: "name-A", Started: time.Now(), Heartbeat: time.Now()},
				Registered: func() { close(registered) }})
		}()
		synctest.Wait()
		if got, err := s.Bridges(context.Background()); err != nil || len(got) != 0 || !own.refused {
			t.Fatalf("bridges after the refused registration: %+v, %v", got, err)
		}
		select {
		case err := <-done:
			t.Fatalf("RunShared returned after the refused registration: %v", err)
		default:
		}
		time.Sleep(time.Second) // one period: at least one beat
		<-registered
		if got, err := s.Bridges(context.Background()); err != nil || len(got) != 1 || got[0].Name != "name-A" {
			t.Fatalf("bridges a heartbeat later: %+v, %v; want A", got, err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
