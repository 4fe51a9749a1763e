package confirm_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/postgres"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
	"github.com/acpmux/acpmux/internal/pgtest"
)

// handoff is a presenter that hands each decision presented to it to the
// inbox's answerers.
type handoff chan *confirm.Decision

func (handoff) HostID() string                                 { return "http" }
func (h handoff) Present(d *confirm.Decision) error            { h <- d; return nil }
func (handoff) Withdraw(*confirm.Decision, confirm.Resolution) {}
func (handoff) Won(*confirm.Decision, confirm.Resolution)      {}

// openShared opens one more instance of the store kind at where, as one
// more process would.
func openShared(b *testing.B, kind, where string) store.Store {
	b.Helper()
	var s store.Store
	var err error
	if kind == "postgres" {
		s, err = postgres.Open(context.Background(), where)
	} else {
		s, err = sqlite.Open(where)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.(interface{ Close() error }).Close() })
	return s
}

// BenchmarkSharedStore measures decisions opened by N bridges and answered
// by an inbox through one shared store: each bridge is an in-process
// broker with its own store instance (its own SQLite connection or pgx
// pool, as its own process would have) running RunShared; 8 askers per
// bridge open decisions (Ask) that 32 answerers of one inbox broker answer
// through the store (claim there, owner notified, owner settles). It
// reports decisions/s (opened and answered) and the p50 and p99 from the
// start of an answer's claim to the owning Ask returning the agent's
// result ("claim-to-agent").
func BenchmarkSharedStore(b *testing.B) {
	kinds := map[string]func(b *testing.B) string{
		"sqlite":   func(b *testing.B) string { return filepath.Join(b.TempDir(), "state.db") },
		"postgres": func(b *testing.B) string { return pgtest.Start(b).Database(b) },
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, n := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/bridges=%d", kind, n), func(b *testing.B) {
				benchShared(b, kind, kinds[kind](b), n)
			})
		}
	}
}

func benchShared(b *testing.B, kind, where string, n int) {
	quiet := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	run := func(br *confirm.Broker, id string) {
		running.Go(func() {
			_ = br.RunShared(ctx, confirm.SharedOptions{Bridge: store.Bridge{ID: id, Started: time.Now(), Heartbeat: time.Now()}})
		})
	}
	inbox := newBroker(b, confirm.Options{Store: openShared(b, kind, where), Inbox: true, Logger: quiet})
	run(inbox, "")
	bridges := make([]*confirm.Broker, n)
	for i := range bridges {
		id := fmt.Sprint("bridge-", i)
		bridges[i] = newBroker(b, confirm.Options{Store: openShared(b, kind, where), BridgeID: id, Logger: quiet})
		run(bridges[i], id)
	}
	presented := make(handoff, 256)
	var claimStart sync.Map // decision id -> time.Time
	var answerers sync.WaitGroup
	for range 32 {
		answerers.Go(func() {
			for d := range presented {
				claimStart.Store(d.ID(), time.Now())
				if _, _, err := inbox.Answer(ctx, d.SessionID(), d.ID(), "inbox", confirm.Answer{OptionID: "allow-once"}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	var next atomic.Int64
	lat := make([][]time.Duration, n*8)
	b.ResetTimer()
	start := time.Now()
	var askers sync.WaitGroup
	for w := range n * 8 {
		br := bridges[w%n]
		askers.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				res, err := br.Ask(ctx, req("s1", fmt.Sprint(w, "/", i)), []confirm.Presenter{presented})
				done := time.Now()
				if err != nil || string(res) != selected("allow-once") {
					b.Errorf("ask: %s %v", res, err)
					return
				}
				id := confirm.DecisionID("s1", fmt.Sprint(w, "/", i))
				if t0, ok := claimStart.Load(id); ok {
					lat[w] = append(lat[w], done.Sub(t0.(time.Time)))
				}
			}
		})
	}
	askers.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(presented)
	answerers.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
}
