package classify_test

import (
	"runtime"
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
