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
	"github.com/acpmux/acpmux/internal/leakcheck"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/sessions")

func TestMain(m *testing.M) {
	acptest.MaybeRunAgent()
	os.Exit(leakcheck.Run(m))
}

// transcript is the outcome of one scripted session through the bridge.
type transcript struct {
	host, agent []string // NDJSON lines each side received
	exit        int
	stderr      string
}

// runScripted runs the fake agent with script behind a bridge and feeds the
// host lines. A host line "#!wait N" waits until the host has received N
// messages; "#!eof" closes the host's input; "#!sleep D" pauses.
func runScripted(t *testing.T, script, hostIn string, opts bridge.Options) transcript {
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
	hostR, hostW := io.Pipe() // host → bridge
	outR, outW := io.Pipe()   // bridge → host
	b.AddHost(bridge.NewHost("ide", bridge.NewNDJSONConn(hostR, outW, hostR, maxLine), bridge.HostOptions{Blocking: true}))

	var (
		mu       sync.Mutex
		received []string
		cond     = sync.NewCond(&mu)
		readDone = make(chan struct{})
	)
	go func() {
		defer close(readDone)
		r := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				mu.Lock()
				received = append(received, strings.TrimSuffix(string(line), "\n"))
				cond.Broadcast()
				mu.Unlock()
			}
			if err != nil {
				mu.Lock()
				received = append(received, "#!closed")
				cond.Broadcast()
				mu.Unlock()
				return
			}
		}
	}()
	go func() {
		for _, line := range strings.Split(hostIn, "\n") {
			switch {
			case strings.TrimSpace(line) == "":
			case strings.HasPrefix(line, "#!wait "):
				n, _ := strconv.Atoi(strings.TrimPrefix(line, "#!wait "))
				mu.Lock()
				for len(received) < n {
					cond.Wait()
				}
				mu.Unlock()
			case strings.HasPrefix(line, "#!sleep "):
				d, _ := time.ParseDuration(strings.TrimPrefix(line, "#!sleep "))
				time.Sleep(d)
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b.Run(ctx)
	code := agent.ExitCode()
	outW.Close()
	hostW.Close()
	<-readDone
	agentLines, _ := os.ReadFile(agentLog)
	mu.Lock()
	defer mu.Unlock()
	host := received[:len(received)-1] // drop "#!closed"
	return transcript{host: host, agent: splitLines(string(agentLines)), exit: code, stderr: stderr.String()}
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
// the host's input, and the NDJSON each side must receive, compared as JSON
// values line by line (lines over 1 MiB by length and SHA-256).
func TestGoldenSessions(t *testing.T) {
	files, _ := filepath.Glob("../testdata/sessions/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden sessions found")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, f := range ar.Files {
				sec[f.Name] = string(f.Data)
			}
			var opts bridge.Options
			if v := strings.TrimSpace(sec["max-line-bytes"]); v != "" {
				opts.MaxLineBytes, _ = strconv.Atoi(v)
			}
			if v := strings.TrimSpace(sec["replay-max-bytes"]); v != "" {
				opts.ReplayMaxBytes, _ = strconv.Atoi(v)
			}
			if v := strings.TrimSpace(sec["grace"]); v != "" {
				// A session that waits for the agent to exit by itself:
				// under -race the scripted agent may need longer.
				opts.GracePeriod, _ = time.ParseDuration(v)
			}
			got := runScripted(t, sec["agent"], sec["host"], opts)
			if *update {
				writeGolden(t, file, ar, got)
				return
			}
			exact := strings.Fields(sec["exact"])
			compareLines(t, "host", got.host, sec["want-host"], slices.Contains(exact, "host"))
			compareLines(t, "agent", got.agent, sec["want-agent"], slices.Contains(exact, "agent"))
			if want := strings.TrimSpace(sec["want-exit"]); want != "" && want != strconv.Itoa(got.exit) {
				t.Errorf("exit status %d, want %s", got.exit, want)
			}
			for _, want := range splitLines(sec["want-stderr"]) {
				if !strings.Contains(got.stderr, want) {
					t.Errorf("stderr lacks %q; stderr:\n%s", want, got.stderr)
				}
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", got.stderr)
			}
		})
	}
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
// or, when exact, byte for byte.
func compareLines(t *testing.T, side string, got []string, wantText string, exact bool) {
	t.Helper()
	want := splitLines(wantText)
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = golden(got[i])
		}
		if i < len(want) {
			w = want[i]
		}
		if exact && g != w || !sameJSON(g, w) {
			t.Errorf("%s line %d:\n got: %s\nwant: %s", side, i+1, g, w)
		}
	}
}

// sameJSON compares two lines as JSON values, or as text when either is
// not JSON.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
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
