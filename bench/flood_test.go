// Package bench holds acpmux's end-to-end benchmarks; see bench/README.md.
package bench

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// build compiles the module packages into dir and returns their paths.
func build(b *testing.B, dir string, pkgs ...string) []string {
	b.Helper()
	var out []string
	for _, p := range pkgs {
		bin := filepath.Join(dir, filepath.Base(p))
		if o, err := exec.Command("go", "build", "-o", bin, p).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", p, err, o)
		}
		out = append(out, bin)
	}
	return out
}

// BenchmarkFlood times a prompt turn of 200,000 session/update
// notifications from bench/floodagent to bench/floodhost (which decodes
// each message as an ACP client must), over a direct pipe and through
// "acpmux run --". ns/op is one whole turn; maxRSS-KB is the peak resident
// set of the process floodhost started (the agent, or acpmux with the agent).
// bench/flood.sh runs both side by side and prints the ratio.
func BenchmarkFlood(b *testing.B) {
	dir := b.TempDir()
	bins := build(b, dir, "../bench/floodagent", "../bench/floodhost", "../cmd/acpmux")
	agent, host, acpmux := bins[0], bins[1], bins[2]
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"direct", []string{agent}},
		{"acpmux", []string{acpmux, "run", "--log-level", "error", "--", agent}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var rss int64
			for b.Loop() {
				cmd := exec.Command(host, c.argv...)
				cmd.Stderr = os.Stderr
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("floodhost: %v", err)
				}
				var r struct{ MaxRSSKB int64 }
				json.Unmarshal(out, &r)
				rss = max(rss, r.MaxRSSKB)
			}
			b.ReportMetric(float64(rss), "maxRSS-KB")
		})
	}
}
