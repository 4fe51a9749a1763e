package confirm_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
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
// bridge open decisions (Ask) one after the other, as fast as they are
// answered (a closed loop: the store's most decisions/s), and 32
// answerers of one inbox broker answer them through the store (claim
// there, owner notified, owner settles). It reports decisions/s (opened
// and answered) and the p50 and p99 from the start of an answer's claim
// to the owning Ask returning the agent's result ("claim-to-agent"), over
// the decisions after a warm-up of 24 per bridge (warmupAsks), whose own
// p99 is warmup-p99-ms: the cold start of the bridges' connections.
func BenchmarkSharedStore(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, n := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/bridges=%d", kind, n), func(b *testing.B) {
				where, server := sharedWhere(b, kind)
				benchShared(b, kind, where, server, n, 0)
			})
		}
	}
}

// BenchmarkSharedStoreAtRate is BenchmarkSharedStore at a fixed offered
// load instead of a closed loop: the 16 bridges together open decisions
// on a fixed schedule, one every 1/rate seconds (1,000/s on PostgreSQL,
// 300/s on SQLite), round robin over the bridges, whether or not earlier
// ones were answered, so its claim-to-agent times are those of a store
// doing that many decisions/s, not of one with 128 asks queued for its
// CPU. decisions/s is b.N over the time from the first ask to the last
// answer: the schedule's b.N/rate seconds plus the last decisions' own
// latency, so it approaches the rate only in long runs
// (docs/performance.md uses -benchtime 4000x) and stays under it when the
// store falls behind. behind-ms is how much longer than the schedule the
// run took. Claim-to-agent starts when an answerer starts its answer, as
// in BenchmarkSharedStore: time a presented decision waits for one of the
// 32 answerers is not in it.
func BenchmarkSharedStoreAtRate(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		rate := 1000
		if kind == "sqlite" {
			rate = 300 // about SQLite's most (BenchmarkSharedStore)
		}
		b.Run(fmt.Sprintf("%s/bridges=16/rate=%d", kind, rate), func(b *testing.B) {
			where, server := sharedWhere(b, kind)
			benchShared(b, kind, where, server, 16, rate)
		})
	}
}

// warmupAsks is how many decisions each of a benchmark's askers (8 per
// bridge) opens, one after the other, before the measured ones.
const warmupAsks = 3

// sharedWhere returns a fresh store of kind: a SQLite file in b's
// temporary directory, or a database of a throwaway PostgreSQL server
// and that server.
func sharedWhere(b *testing.B, kind string) (string, *pgtest.Server) {
	if kind == "postgres" {
		s := pgtest.Start(b)
		return s.Database(b), s
	}
	return filepath.Join(b.TempDir(), "state.db"), nil
}

// benchShared runs b.N decisions through n bridges sharing the store at
// where (served by server, for PostgreSQL): in a closed loop of 8 askers
// per bridge when rate is 0, else opened at rate decisions per second
// over the bridges.
func benchShared(b *testing.B, kind, where string, server *pgtest.Server, n, rate int) {
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
	var (
		mu  sync.Mutex
		lat []time.Duration
	)
	// ask opens decision i on br and records its claim-to-agent time.
	ask := func(br *confirm.Broker, w int, i int64) bool {
		res, err := br.Ask(ctx, req("s1", fmt.Sprint(w, "/", i)), []confirm.Presenter{presented})
		done := time.Now()
		if err != nil || string(res) != selected("allow-once") {
			b.Errorf("ask: %s %v", res, err)
			return false
		}
		if t0, ok := claimStart.Load(confirm.DecisionID("s1", fmt.Sprint(w, "/", i))); ok {
			mu.Lock()
			lat = append(lat, done.Sub(t0.(time.Time)))
			mu.Unlock()
		}
		return true
	}
	// Warm up: each bridge's and the inbox's first decisions open the
	// pools' connections, prepare each statement on each of them, load the
	// server's caches of each new session and register each instance's
	// chain lane (serialized on the main chain's head), about 0.1 to 0.3 s
	// in all; the measured decisions are the steady state after. The warm
	// decisions' own claim-to-agent p99 is reported as warmup-p99-ms.
	var warm sync.WaitGroup
	for w := range n * 8 {
		warm.Go(func() {
			for i := range int64(warmupAsks) {
				if !ask(bridges[w%n], w, -1-i) {
					return
				}
			}
		})
	}
	warm.Wait()
	mu.Lock()
	warmLat := slices.Clone(lat)
	lat = lat[:0]
	mu.Unlock()
	slices.Sort(warmLat)
	b.ResetTimer()
	cpu0 := sharedCPU(server)
	start := time.Now()
	var askers sync.WaitGroup
	if rate == 0 {
		var next atomic.Int64
		for w := range n * 8 {
			askers.Go(func() {
				for {
					i := next.Add(1)
					if i > int64(b.N) || !ask(bridges[w%n], w, i) {
						return
					}
				}
			})
		}
	} else {
		every := time.Second / time.Duration(rate)
		for i := range int64(b.N) {
			time.Sleep(time.Until(start.Add(time.Duration(i) * every)))
			w := int(i) % n
			askers.Go(func() { ask(bridges[w], w, i) })
		}
	}
	askers.Wait()
	elapsed := time.Since(start)
	cpu1 := sharedCPU(server)
	b.StopTimer()
	close(presented)
	answerers.Wait()
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	if rate > 0 {
		b.ReportMetric(float64((elapsed-time.Duration(b.N)*(time.Second/time.Duration(rate))).Microseconds())/1000, "behind-ms")
	}
	b.ReportMetric(float64((cpu1.own-cpu0.own).Microseconds())/float64(b.N), "cpu-µs/decision")
	if cpu0.ok && cpu1.ok {
		b.ReportMetric(float64((cpu1.server-cpu0.server).Microseconds())/float64(b.N), "server-cpu-µs/decision")
	}
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	if len(warmLat) > 0 {
		b.ReportMetric(float64(warmLat[len(warmLat)*99/100].Microseconds())/1000, "warmup-p99-ms")
	}
}

// cpuReading is the processor time used so far by this process (its
// bridges, the inbox and their store clients) and by the PostgreSQL
// server, if any.
type cpuReading struct {
	own, server time.Duration
	ok          bool // server was read
}

// sharedCPU reads the processor time of this process and of server
// (which may be nil).
func sharedCPU(server *pgtest.Server) cpuReading {
	var r cpuReading
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		r.own = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if server != nil {
		r.server, r.ok = server.CPU()
	}
	return r
}
