package bridge_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/internal/leakcheck"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/sessions")

func TestMain(m *testing.M) {
	acptest.MaybeRunAgent()
	os.Exit(leakcheck.Run(m))
}

// transcript is the outcome of one scripted session through the bridge.
type transcript struct {
	host  []string            // NDJSON lines the primary host ("ide") received
	hosts map[string][]string // the same for every host, by name
	agent []string            // NDJSON lines the agent received
	exit  int
	// stderr is the agent's stderr and the bridge's log.
	stderr string
}

// primaryHost names the host of a golden file's "host" section: the
// primary host, added first.
const primaryHost = "ide"

// runScripted runs the fake agent with script behind a bridge and feeds the
// host lines to one host, the primary "ide". See [runHosts].
func runScripted(t *testing.T, script, hostIn string, opts bridge.Options) transcript {
	t.Helper()
	return runHosts(t, script, map[string]string{primaryHost: hostIn}, opts)
}

// runHosts runs the fake agent with script behind a bridge with one host
// per entry of hostIn (name → input lines): "ide" first (the primary), the
// others in name order. Each host's lines are fed on a goroutine of its
// own; a line may instead be a directive:
//
//	#!wait N              until this host has received N messages
//	#!wait HOST N         until HOST has received N messages
//	#!until HOST TEXT     until HOST has received a message containing TEXT
//	#!eof                 close this host's input (the primary half-closes;
//	                      any other host leaves)
//
// Two hosts that each wait for the same message and then answer race each
// other: the race is in the data, and the want sections say what every
// outcome must look like (see [TestGoldenSessions]).
func runHosts(t *testing.T, script string, hostIn map[string]string, opts bridge.Options) transcript {
	t.Helper()
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.ndjson")
	var stderr syncBuffer
	maxLine := opts.MaxLineBytes
	agent, err := bridge.StartAgent(bridge.AgentOptions{
		Argv:         []string{os.Args[0]},
		Env:          append(os.Environ(), acptest.EnvScript+"="+script, acptest.EnvLog+"="+agentLog),
		Stderr:       &stderr,
		MaxLineBytes: maxLine,
	})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(&stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.GracePeriod == 0 {
		opts.GracePeriod = 500 * time.Millisecond
	}
	b := bridge.New(agent, opts)

	var (
		mu       sync.Mutex // guards received
		received = map[string][]string{}
		cond     = sync.NewCond(&mu)
		readers  sync.WaitGroup
		closers  []func()
	)
	names := slices.Sorted(maps.Keys(hostIn))
	if i := slices.Index(names, primaryHost); i > 0 {
		names = append(append([]string{primaryHost}, names[:i]...), names[i+1:]...)
	}
	// waitUntil blocks until ok holds for the lines host has received, or
	// the host's output has closed.
	waitUntil := func(host string, ok func([]string) bool) {
		mu.Lock()
		defer mu.Unlock()
		for {
			got := received[host]
			if ok(got) || len(got) > 0 && got[len(got)-1] == "#!closed" {
				return
			}
			cond.Wait()
		}
	}
	for _, name := range names {
		hostR, hostW := io.Pipe() // host → bridge
		outR, outW := io.Pipe()   // bridge → host
		var closer io.Closer = hostR
		if name != primaryHost {
			// A host that leaves or is dropped loses both directions, as a
			// WebSocket host does: its reader sees "#!closed".
			closer = closeBoth{hostR, outW}
		}
		if err := b.AddHost(bridge.NewHost(name, bridge.NewNDJSONConn(hostR, outW, closer, maxLine), bridge.HostOptions{Blocking: true})); err != nil {
			t.Fatal(err)
		}
		closers = append(closers, func() { outW.Close(); hostW.Close() })
		readers.Add(1)
		go func() {
			defer readers.Done()
			r := bufio.NewReaderSize(outR, 1<<20)
			for {
				line, err := r.ReadBytes('\n')
				mu.Lock()
				if len(line) > 0 {
					received[name] = append(received[name], strings.TrimSuffix(string(line), "\n"))
				}
				if err != nil {
					received[name] = append(received[name], "#!closed")
				}
				cond.Broadcast()
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
		go func() {
			for _, line := range strings.Split(hostIn[name], "\n") {
				switch {
				case strings.TrimSpace(line) == "":
				case strings.HasPrefix(line, "#!wait "):
					host, count := name, strings.TrimPrefix(line, "#!wait ")
					if h, c, two := strings.Cut(count, " "); two {
						host, count = h, c
					}
					n, _ := strconv.Atoi(count)
					waitUntil(host, func(got []string) bool { return len(got) >= n })
				case strings.HasPrefix(line, "#!until "):
					host, text, _ := strings.Cut(strings.TrimPrefix(line, "#!until "), " ")
					waitUntil(host, func(got []string) bool {
						return slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, text) })
					})
				case line == "#!eof":
					hostW.Close()
					return
				default:
					if _, err := io.WriteString(hostW, line+"\n"); err != nil {
						return
					}
				}
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b.Run(ctx)
	code := agent.ExitCode()
	for _, c := range closers {
		c()
	}
	readers.Wait()
	agentLines, _ := os.ReadFile(agentLog)
	mu.Lock()
	defer mu.Unlock()
	hosts := map[string][]string{}
	for name, got := range received {
		hosts[name] = got[:len(got)-1] // drop "#!closed"
	}
	return transcript{host: hosts[primaryHost], hosts: hosts, agent: splitLines(string(agentLines)), exit: code, stderr: stderr.String()}
}

// closeBoth closes both pipes of a host.
type closeBoth [2]io.Closer

func (c closeBoth) Close() error {
	c[0].Close()
	return c[1].Close()
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestGoldenSessions runs every testdata/sessions/*.txtar: an agent script,
// each host's input, and the NDJSON each side must receive, compared as JSON
// values line by line (lines over 1 MiB by length and SHA-256).
//
// Sections: "agent" (the fake agent's script), "host" (the primary host's
// input, host "ide"), "host:NAME" (the input of another host NAME), and
// "want-host", "want-host:NAME", "want-agent", "want-exit", "want-stderr"
// (lines the stderr must contain), "reject-stderr" (text it must not). "broker" puts a [confirm.Broker] (its
// content: the decisions' timeout, default 1m) between the bridge and the
// hosts, so that a permission request is presented to every host of the
// session. "exact" lists sides compared byte for byte. In a want line the
// JSON string "#!any" matches any value (a timestamp, a decision id).
//
// A session runs twice: with the default replay log, and as subtest
// "noreplay" with none (ReplayMaxBytes -1, what acpmux run keeps without
// --listen): both must give the same transcript. A session that attaches
// a host (its replay shows) or sets "replay-max-bytes" runs once.
//
// "race" lists two hosts whose answers race: want lines may name them
// $WINNER and $LOSER, a line that begins "#!winner " or "#!loser " is
// expected only on that host, one that begins "#!optional " may be missing,
// and the session passes when one of the two ways of naming them matches
// everything: which host won is data.
func TestGoldenSessions(t *testing.T) {
	files, _ := filepath.Glob("../testdata/sessions/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden sessions found")
	}
	for _, file := range files {
		for _, noReplay := range []bool{false, true} {
			name := strings.TrimSuffix(filepath.Base(file), ".txtar")
			if noReplay {
				name += "/noreplay"
			}
			t.Run(name, func(t *testing.T) {
				ar, err := txtar.ParseFile(file)
				if err != nil {
					t.Fatal(err)
				}
				sec := map[string]string{}
				inputs := map[string]string{}
				for _, f := range ar.Files {
					sec[f.Name] = string(f.Data)
					if f.Name == "host" {
						inputs[primaryHost] = string(f.Data)
					} else if name, ok := strings.CutPrefix(f.Name, "host:"); ok {
						inputs[name] = string(f.Data)
					}
				}
				if noReplay && (strings.Contains(strings.Join(slices.Collect(maps.Values(inputs)), ""), "session/attach") || sec["replay-max-bytes"] != "") {
					t.Skip("the session attaches a host (its replay shows) or sets its own replay budget")
				}
				var opts bridge.Options
				if v := strings.TrimSpace(sec["max-line-bytes"]); v != "" {
					opts.MaxLineBytes, _ = strconv.Atoi(v)
				}
				if v := strings.TrimSpace(sec["replay-max-bytes"]); v != "" {
					opts.ReplayMaxBytes, _ = strconv.Atoi(v)
				} else if noReplay {
					opts.ReplayMaxBytes = -1
				}
				if v := strings.TrimSpace(sec["grace"]); v != "" {
					// A session that waits for the agent to exit by itself:
					// under -race the scripted agent may need longer.
					opts.GracePeriod, _ = time.ParseDuration(v)
				}
				if v, ok := sec["broker"]; ok {
					opts.Broker = goldenBroker(t, strings.TrimSpace(v))
				}
				got := runHosts(t, sec["agent"], inputs, opts)
				if *update {
					writeGolden(t, file, ar, got)
					return
				}
				namings := []map[string]string{nil}
				if race := strings.Fields(sec["race"]); len(race) == 2 {
					namings = []map[string]string{
						{"$WINNER": race[0], "$LOSER": race[1]},
						{"$WINNER": race[1], "$LOSER": race[0]},
					}
				}
				var errs []string
				for k, naming := range namings {
					e := compareTranscript(sec, got, naming)
					if k == 0 || len(e) < len(errs) {
						errs = e
					}
				}
				for _, e := range errs {
					t.Error(e)
				}
				if t.Failed() {
					t.Logf("stderr:\n%s", got.stderr)
				}
			})
		}
	}
}

// goldenBroker is the broker of a golden session with a "broker" section:
// timeout is the decisions' default timeout ("" for 1m).
func goldenBroker(t *testing.T, timeout string) *confirm.Broker {
	t.Helper()
	d := time.Minute
	if timeout != "" {
		var err error
		if d, err = time.ParseDuration(timeout); err != nil {
			t.Fatal(err)
		}
	}
	br, err := confirm.NewBroker(confirm.Options{DefaultTimeout: d, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); br.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return br
}

// compareTranscript compares got with the want sections of sec and returns
// the differences. naming, for a race, gives "$WINNER" and "$LOSER" their
// hosts: the names are put in every want line, and a want line of host H
// that begins "#!winner " ("#!loser ") is kept, without the prefix, only
// when H is the winner (the loser).
func compareTranscript(sec map[string]string, got transcript, naming map[string]string) []string {
	want := func(host, text string) string {
		var sb strings.Builder
		for _, l := range splitLines(text) {
			for _, role := range []string{"winner", "loser"} {
				if rest, ok := strings.CutPrefix(l, "#!"+role+" "); ok {
					if naming["$"+strings.ToUpper(role)] != host {
						rest = ""
					}
					l = rest
				}
			}
			for k, v := range naming {
				l = strings.ReplaceAll(l, k, v)
			}
			if l != "" {
				sb.WriteString(l + "\n")
			}
		}
		return sb.String()
	}
	exact := strings.Fields(sec["exact"])
	var errs []string
	for host, lines := range got.hosts {
		key := "want-host:" + host
		if host == primaryHost {
			key = "want-host"
		}
		if _, ok := sec[key]; !ok && host != primaryHost {
			errs = append(errs, fmt.Sprintf("host %s has no %s section", host, key))
		}
		errs = append(errs, compareLines(key, lines, want(host, sec[key]), slices.Contains(exact, strings.TrimPrefix(key, "want-")))...)
	}
	for key := range sec {
		if host, ok := strings.CutPrefix(key, "want-host:"); ok && got.hosts[host] == nil {
			errs = append(errs, fmt.Sprintf("%s: no host %s took part", key, host))
		}
	}
	errs = append(errs, compareLines("agent", got.agent, want("", sec["want-agent"]), slices.Contains(exact, "agent"))...)
	if w := strings.TrimSpace(sec["want-exit"]); w != "" && w != strconv.Itoa(got.exit) {
		errs = append(errs, fmt.Sprintf("exit status %d, want %s", got.exit, w))
	}
	for _, w := range splitLines(sec["want-stderr"]) {
		if !strings.Contains(got.stderr, w) {
			errs = append(errs, fmt.Sprintf("stderr lacks %q", w))
		}
	}
	for _, w := range splitLines(sec["reject-stderr"]) {
		if strings.Contains(got.stderr, w) {
			errs = append(errs, fmt.Sprintf("stderr has %q", w))
		}
	}
	slices.Sort(errs)
	return errs
}

// golden renders a received line for a golden file.
func golden(line string) string {
	if len(line) > 1<<20 {
		sum := sha256.Sum256([]byte(line))
		return fmt.Sprintf("#!sha256 %s %d", hex.EncodeToString(sum[:]), len(line))
	}
	return line
}

// compareLines compares received lines with the golden ones, as JSON values
// or, when exact, byte for byte, and returns the differences. A want line
// that begins "#!optional " may be missing from got (a race decides it).
func compareLines(side string, got []string, wantText string, exact bool) []string {
	want := splitLines(wantText)
	var errs []string
	for i, j := 0, 0; i < len(got) || j < len(want); {
		var g, w string
		if i < len(got) {
			g = golden(got[i])
		}
		optional := false
		if j < len(want) {
			w, optional = strings.CutPrefix(want[j], "#!optional ")
		}
		same := !(exact && g != w) && sameJSON(g, w)
		switch {
		case !same && optional:
			j++
			continue
		case !same:
			errs = append(errs, fmt.Sprintf("%s line %d:\n got: %s\nwant: %s", side, i+1, g, w))
		}
		i++
		j++
	}
	return errs
}

// sameJSON compares two lines as JSON values, or as text when either is
// not JSON. A string "#!any" in want matches any value.
func sameJSON(got, want string) bool {
	var x, y any
	if json.Unmarshal([]byte(got), &x) != nil || json.Unmarshal([]byte(want), &y) != nil {
		return got == want
	}
	return matchJSON(x, y)
}

// matchJSON reports whether the decoded JSON value got matches want.
func matchJSON(got, want any) bool {
	if want == "#!any" {
		return true
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !matchJSON(gv, wv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !matchJSON(g[i], w[i]) {
				return false
			}
		}
		return true
	}
	return got == want
}

func writeGolden(t *testing.T, file string, ar *txtar.Archive, got transcript) {
	set := func(name string, lines []string) {
		var sb strings.Builder
		for _, l := range lines {
			sb.WriteString(golden(l) + "\n")
		}
		for i := range ar.Files {
			if ar.Files[i].Name == name {
				ar.Files[i].Data = []byte(sb.String())
				return
			}
		}
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(sb.String())})
	}
	set("want-host", got.host)
	for _, host := range slices.Sorted(maps.Keys(got.hosts)) {
		if host != primaryHost {
			set("want-host:"+host, got.hosts[host])
		}
	}
	set("want-agent", got.agent)
	set("want-exit", []string{strconv.Itoa(got.exit)})
	if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
