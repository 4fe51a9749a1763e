package classify_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/classify"
)

// BenchmarkCorpus classifies every command of the corpus per iteration
// and reports commands per second and allocations per command. The
// target is at least 50,000 commands/s on one core (go test -cpu 1).
func BenchmarkCorpus(b *testing.B) {
	rows := loadCorpus(b)
	cmds := make([]string, len(rows))
	for i, r := range rows {
		cmds[i] = r.Cmd
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for _, c := range cmds {
			classify.Command(c)
		}
		n += len(cmds)
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commands/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/command")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n), "B/command")
}

// BenchmarkGuardLargeInput classifies a 240 KB input of 20,000 quoted
// backslash-newlines, each a divergence inside a span: the guard's span
// lookup must stay linear (a scan per offset took 0.5 s here; 35 ms now).
func BenchmarkGuardLargeInput(b *testing.B) {
	src := strings.Repeat("echo \"a\\\nb\" ", 20000)
	for b.Loop() {
		if v := classify.Command(src); v.Class != classify.Unknown || !v.Diverges {
			b.Fatalf("Command = %v, diverges %v", v.Class, v.Diverges)
		}
	}
}
