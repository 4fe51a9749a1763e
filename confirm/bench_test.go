package confirm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// benchHost answers every decision presented to it at once, from its own
// goroutine, through AnswerResult, and notes when it was presented.
type benchHost struct {
	id    string
	b     *confirm.Broker
	queue chan *confirm.Decision
	seen  chan time.Time // first presentation time of each decision (host 0 only)
}

func (h *benchHost) HostID() string { return h.id }
func (h *benchHost) Present(d *confirm.Decision) error {
	if h.seen != nil {
		h.seen <- time.Now()
	}
	h.queue <- d
	return nil
}
func (h *benchHost) Withdraw(*confirm.Decision, confirm.Resolution) {}
func (h *benchHost) Won(*confirm.Decision, confirm.Resolution)      {}

func (h *benchHost) run() {
	res := json.RawMessage(selected("allow-once"))
	for d := range h.queue {
		_ = h.b.AnswerResult(context.Background(), d.ID(), h.id, res)
	}
}

// startHosts starts n answering hosts; stop ends their goroutines.
func startHosts(b *confirm.Broker, n int) (hosts []confirm.Presenter, seen chan time.Time, stop func()) {
	var wg sync.WaitGroup
	var bhs []*benchHost
	seen = make(chan time.Time, 1)
	for i := range n {
		h := &benchHost{id: fmt.Sprint("host", i), b: b, queue: make(chan *confirm.Decision, 16)}
		if i == 0 {
			h.seen = seen
		}
		bhs = append(bhs, h)
		hosts = append(hosts, h)
		wg.Go(h.run)
	}
	return hosts, seen, func() {
		for _, h := range bhs {
			close(h.queue)
		}
		wg.Wait()
	}
}

func benchBroker(b *testing.B, kind string) *confirm.Broker {
	opts := confirm.Options{Logger: slog.New(slog.DiscardHandler)}
	switch kind {
	case "sqlite-file":
		opts.Store = fileStore(b)
	case "sqlite-memory":
		opts.Store = memStore(b)
	}
	return newBroker(b, opts)
}

// BenchmarkAskAnswer measures one permission request end to end: Ask (the
// agent's request) -> presented to the hosts -> every host answers at once
// -> Ask returns the agent's result. It reports the p50 and p99 of the
// whole latency and of the time until the first host saw the decision.
func BenchmarkAskAnswer(b *testing.B) {
	for _, kind := range []string{"none", "sqlite-memory", "sqlite-file"} {
		for _, n := range []int{1, 8} {
			b.Run(fmt.Sprintf("store=%s/hosts=%d", kind, n), func(b *testing.B) {
				br := benchBroker(b, kind)
				hosts, seen, stop := startHosts(br, n)
				defer stop()
				total := make([]time.Duration, 0, b.N)
				visible := make([]time.Duration, 0, b.N)
				i := 0
				for b.Loop() {
					start := time.Now()
					if _, err := br.Ask(context.Background(), req("s", fmt.Sprint("k", i)), hosts); err != nil {
						b.Fatal(err)
					}
					total = append(total, time.Since(start))
					visible = append(visible, (<-seen).Sub(start))
					i++
				}
				reportPercentiles(b, "", total)
				reportPercentiles(b, "visible-", visible)
			})
		}
	}
}

func reportPercentiles(b *testing.B, prefix string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), prefix+"p50-µs")
	b.ReportMetric(at(0.99), prefix+"p99-µs")
}

// BenchmarkDecisionsSQLite measures decisions opened and answered per
// second through the SQLite store on a file (WAL, synchronous=FULL): each
// decision is one insert, a presented event, the claim transaction, a
// withdrawal-free close and a delivered event. "parallel" runs 8 askers.
func BenchmarkDecisionsSQLite(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		br := benchBroker(b, "sqlite-file")
		hosts, seen, stop := startHosts(br, 1)
		defer stop()
		i := 0
		start := time.Now()
		for b.Loop() {
			if _, err := br.Ask(context.Background(), req("s", fmt.Sprint("k", i)), hosts); err != nil {
				b.Fatal(err)
			}
			<-seen
			i++
		}
		b.ReportMetric(float64(i)/time.Since(start).Seconds(), "decisions/s")
	})
	b.Run("parallel", func(b *testing.B) {
		br := benchBroker(b, "sqlite-file")
		var mu sync.Mutex
		n := 0
		start := time.Now()
		b.SetParallelism(4) // 4 x GOMAXPROCS askers
		b.RunParallel(func(pb *testing.PB) {
			hosts, seen, stop := startHosts(br, 1)
			defer stop()
			mu.Lock()
			g := n
			n += 1 << 30
			mu.Unlock()
			for pb.Next() {
				if _, err := br.Ask(context.Background(), req("s", fmt.Sprint("k", g)), hosts); err != nil {
					b.Error(err)
					return
				}
				<-seen
				g++
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
	})
}
