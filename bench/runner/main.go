// Command runner runs acpmux's benchmark suite for bench/run: every
// benchmark side by side with its floor, interleaved round by round, the
// median of -rounds rounds, printed as one Markdown table and written with
// the machine and date to -out. The binaries are taken from -bin (built by
// bench/run); the Go benchmarks of confirm and classify run with go test.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	bin     string
	rounds  int
	timeout time.Duration
)

// run executes argv and decodes its one JSON line of output. A run that
// takes longer than -timeout is killed with its whole process group (the
// agent and acpmux it started) and tried once more; a second timeout, a
// failure or output that is not one JSON object ends the runner with exit
// status 1.
func run(argv ...string) map[string]float64 {
	for try := 1; ; try++ {
		out, err := runOnce(argv)
		if errors.Is(err, context.DeadlineExceeded) && try == 1 {
			fmt.Fprintf(os.Stderr, "runner: %s: no result within %s; killed, trying once more\n", strings.Join(argv, " "), timeout)
			continue
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "runner: %s: %v\n", strings.Join(argv, " "), err)
			os.Exit(1)
		}
		m := map[string]float64{}
		if err := json.Unmarshal(bytes.TrimSpace(out), &m); err != nil {
			fmt.Fprintf(os.Stderr, "runner: %s: %v: %s\n", strings.Join(argv, " "), err, out)
			os.Exit(1)
		}
		return m
	}
}

// runOnce runs argv in a process group of its own, killed as a whole when
// the timeout passes.
func runOnce(argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, err
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func b(name string) string { return filepath.Join(bin, name) }

type table struct{ rows [][]string }

func (t *table) add(cells ...string) {
	t.rows = append(t.rows, cells)
	fmt.Fprintln(os.Stderr, strings.Join(cells, " | "))
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func main() {
	flag.StringVar(&bin, "bin", "", "directory of the built benchmark binaries")
	flag.IntVar(&rounds, "rounds", 5, "rounds per benchmark (the median is reported)")
	flag.DurationVar(&timeout, "timeout", 2*time.Minute, "longest one run of one benchmark may take; a run over it is killed and tried once more")
	out := flag.String("out", "docs/performance.md", "Markdown file to write")
	flag.Parse()
	var t table
	tok := filepath.Join(bin, "token")
	os.WriteFile(tok, []byte("bench-token"), 0o600)
	agent := b("floodagent")
	acpmux := []string{b("acpmux"), "run", "--log-level", "error", "--"}
	// acpmux with --listen: hosts can join later, so every session keeps
	// its replay log (without --listen none is kept: docs/protocol.md).
	listening := []string{b("acpmux"), "run", "--log-level", "error", "--listen", "127.0.0.1:0", "--token-file", tok, "--"}

	// 1. Flood, and 6. the flood's peak RSS.
	const n = 200000
	relays := []struct {
		name string
		argv []string
	}{{"direct", nil}, {"bytecopy", []string{b("bytecopy")}}, {"acpmux", acpmux}, {"listening", listening}}
	secs := map[string][]float64{}
	var hwm float64
	for r := 0; r < rounds; r++ {
		for _, mode := range []string{"light", "decode"} {
			for _, rl := range relays {
				if rl.name == "listening" && mode != "light" {
					continue
				}
				argv := []string{b("floodhost"), "-want", fmt.Sprint(n)}
				if mode == "light" {
					argv = append(argv, "-light")
				}
				argv = append(append(argv, rl.argv...), agent, "-n", fmt.Sprint(n))
				m := run(argv...)
				secs[mode+"/"+rl.name] = append(secs[mode+"/"+rl.name], m["seconds"])
				if rl.name == "acpmux" {
					hwm = max(hwm, m["hwmKB"])
				}
			}
		}
	}
	med := func(k string) float64 { return median(secs[k]) }
	for _, mode := range []string{"light", "decode"} {
		t.add(fmt.Sprintf("flood %d updates, %s host: direct / bytecopy / acpmux", n, mode),
			fmt.Sprintf("%.3f / %.3f / %.3f s", med(mode+"/direct"), med(mode+"/bytecopy"), med(mode+"/acpmux")),
			"", "")
	}
	rl := med("light/acpmux") / med("light/bytecopy")
	t.add("flood, light host: acpmux / bytecopy", fmt.Sprintf("%.2fx", rl), "at most 1.5x", verdict(rl <= 1.5))
	rk := med("light/listening") / med("light/bytecopy")
	t.add("flood, light host, acpmux --listen (replay log kept): acpmux / bytecopy", fmt.Sprintf("%.2fx (%.3f s)", rk, med("light/listening")), "", "")
	rd := med("decode/acpmux") / med("decode/direct")
	t.add("flood, decoding host: acpmux / direct", fmt.Sprintf("%.2fx", rd), "at most 1.05x", verdict(rd <= 1.05))

	// 2. Added latency at 1,000 messages/s.
	const ln = 2000
	lat := map[string][]map[string]float64{}
	for r := 0; r < rounds; r++ {
		for _, rl := range relays[1:] {
			argv := append(append([]string{b("floodhost"), "-latency", "-want", fmt.Sprint(ln)}, rl.argv...), agent, "-n", fmt.Sprint(ln), "-rate", "1000")
			lat[rl.name] = append(lat[rl.name], run(argv...))
		}
	}
	lmed := func(name, k string) float64 {
		var xs []float64
		for _, m := range lat[name] {
			xs = append(xs, m[k])
		}
		return median(xs)
	}
	for _, k := range []string{"p50us", "p99us", "maxus"} {
		t.add(fmt.Sprintf("latency at 1,000 msg/s (%d msgs), %s: bytecopy / acpmux", ln, strings.TrimSuffix(k, "us")),
			fmt.Sprintf("%.0f / %.0f µs", lmed("bytecopy", k), lmed("acpmux", k)), "", "")
	}
	added := lmed("acpmux", "p99us") - lmed("bytecopy", "p99us")
	t.add("added latency p99, acpmux minus bytecopy", fmt.Sprintf("%.0f µs", added), "under 100 µs", verdict(added < 100))

	// 3. Fan-out to WebSocket hosts.
	for _, fc := range []struct{ hosts, n int }{{1, 200000}, {8, 200000}, {64, 20000}} {
		var bs, as []float64
		for r := 0; r < rounds; r++ {
			bs = append(bs, run(b("fanhost"), "-hosts", fmt.Sprint(fc.hosts), "-n", fmt.Sprint(fc.n), b("broadcaster"), "--", agent, "-n", fmt.Sprint(fc.n))["seconds"])
			as = append(as, run(b("fanhost"), "-hosts", fmt.Sprint(fc.hosts), "-n", fmt.Sprint(fc.n), "-attach", "-token", "bench-token",
				b("acpmux"), "run", "--listen", "127.0.0.1:0", "--token-file", tok, "--state", ":memory:", "--host-queue", fmt.Sprint(fc.n+16),
				"--log-level", "info", "--", agent, "-n", fmt.Sprint(fc.n))["seconds"])
		}
		ratio := median(as) / median(bs)
		target, v := "", ""
		if fc.hosts == 64 {
			target, v = "at most 1.5x", verdict(ratio <= 1.5)
		}
		t.add(fmt.Sprintf("fan-out, %d WebSocket hosts, %d updates each: broadcaster / acpmux", fc.hosts, fc.n),
			fmt.Sprintf("%.3f / %.3f s (%.2fx)", median(bs), median(as), ratio), target, v)
	}
	var idle []float64
	for r := 0; r < rounds; r++ {
		idle = append(idle, run(b("fanhost"), "-idle", "-hosts", "64", "-attach", "-token", "bench-token",
			b("acpmux"), "run", "--listen", "127.0.0.1:0", "--token-file", tok, "--state", ":memory:", "--log-level", "info", "--", agent)["perHostKB"])
	}
	t.add("memory per idle WebSocket host (RSS delta of 64 attached hosts / 64)", fmt.Sprintf("%.0f KB", median(idle)), "under 100 KB", verdict(median(idle) < 100))

	// 4. Confirmation round trip (confirm.Broker with answering hosts).
	conf := gobench("./confirm/", "BenchmarkAskAnswer/store=(none|sqlite-file)|BenchmarkDecisionsSQLite/serial", "300x", "")
	for _, store := range []string{"none", "sqlite-file"} {
		for _, h := range []string{"1", "8"} {
			m := conf["BenchmarkAskAnswer/store="+store+"/hosts="+h]
			row := fmt.Sprintf("confirmation round trip, %s hosts, store %s: p50 / p99", h, store)
			target, v := "", ""
			if h == "8" {
				limit := 2000.0
				target = "p99 under 2 ms"
				if store != "none" {
					limit, target = 10000, "p99 under 10 ms"
				}
				v = verdict(m["p99-µs"] < limit)
			}
			t.add(row, fmt.Sprintf("%.0f / %.0f µs", m["p50-µs"], m["p99-µs"]), target, v)
		}
	}
	t.add("decisions per second through the SQLite file store (serial)", fmt.Sprintf("%.0f", conf["BenchmarkDecisionsSQLite/serial"]["decisions/s"]), "", "")

	// 5. Classifier: throughput in the steady state, Go's default
	// benchtime of one second a round (3 passes over the corpus, 12 ms,
	// measured a cold start: 25-30% fewer commands/s), the median of the
	// rounds.
	var cls []float64
	var cl map[string]float64
	for r := 0; r < rounds; r++ {
		cl = gobench("./classify/", "BenchmarkCorpus$", "1s", "1")["BenchmarkCorpus"]
		cls = append(cls, cl["commands/s"])
	}
	t.add("classifier, corpus, one core: commands/s", fmt.Sprintf("%.0f (%.1f allocs, %.0f B per command)", median(cls), cl["allocs/command"], cl["B/command"]),
		"at least 150,000/s", verdict(median(cls) >= 150000))

	// 6. Memory.
	t.add("peak RSS (VmHWM) of acpmux, 200,000-update flood", fmt.Sprintf("%.1f MB", hwm/1024), "under 40 MB", verdict(hwm/1024 < 40))
	var sh []float64
	for r := 0; r < max(1, rounds/2); r++ {
		sh = append(sh, run(append(append([]string{b("floodhost"), "-light", "-sessions", "10", "-want", "100000"}, listening...), agent, "-n", "100000")...)["hwmKB"])
	}
	const budget = 10 * 16 // MB: 10 sessions x the default 16 MiB replay budget
	t.add("peak RSS of acpmux --listen, 10 sessions x 100,000 updates in the replay log", fmt.Sprintf("%.1f MB", median(sh)/1024),
		fmt.Sprintf("under %d MB (budget) + 40 MB", budget), verdict(median(sh)/1024 < budget+40))

	write(*out, t)
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

// gobench runs go test -bench and returns each benchmark's metrics by unit.
func gobench(pkg, pattern, benchtime, cpu string) map[string]map[string]float64 {
	args := []string{"test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime}
	if cpu != "" {
		args = append(args, "-cpu", cpu)
	}
	out, err := exec.Command("go", append(args, pkg)...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner: go test %s: %v\n%s", pkg, err, out)
		os.Exit(1)
	}
	res := map[string]map[string]float64{}
	for _, l := range strings.Split(string(out), "\n") {
		m := benchLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		f := strings.Fields(m[3])
		vals := map[string]float64{}
		for i := 0; i+1 < len(f); i += 2 {
			v, _ := strconv.ParseFloat(f[i], 64)
			vals[f[i+1]] = v
		}
		res[m[1]] = vals
	}
	return res
}

func write(path string, t table) {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	goVersion, _ := exec.Command("go", "env", "GOVERSION").Output()
	var s strings.Builder
	fmt.Fprintf(&s, "| what | measured | target | |\n| --- | --- | --- | --- |\n")
	for _, r := range t.rows {
		fmt.Fprintf(&s, "| %s |\n", strings.Join(r, " | "))
	}
	tbl := s.String()
	fmt.Print(tbl)
	machine := fmt.Sprintf("Machine: %d cores (nproc), %s, %s; %s; median of %d rounds.\n",
		runtime.NumCPU(), cpu, strings.TrimSpace(string(goVersion)), time.Now().UTC().Format("2006-01-02 15:04 UTC"), rounds)
	fmt.Print(machine)
	doc, err := os.ReadFile(path)
	begin, end := "<!-- bench/run: begin -->", "<!-- bench/run: end -->"
	body := begin + "\n" + machine + "\n" + tbl + end
	if err == nil && bytes.Contains(doc, []byte(begin)) && bytes.Contains(doc, []byte(end)) {
		i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))+len(end)
		doc = append(append(append([]byte{}, doc[:i]...), body...), doc[j:]...)
	} else {
		doc = []byte("# Performance\n\n" + body + "\n")
	}
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(1)
	}
}
