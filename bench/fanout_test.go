package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

var listenRe = regexp.MustCompile(`url=http://([^/ ]+)`)

// BenchmarkFanout floods a prompt turn of 200,000 session/update
// notifications (bench/floodagent) through "acpmux run --listen" to 1, 8 and
// 64 WebSocket hosts attached to the session, besides the stdio IDE.
// Metrics: s/host-median and s/host-max, the time from the prompt to a
// host's last notification; maxRSS-KB, acpmux's peak resident set.
// Run: go test -bench Fanout -benchtime 1x ./bench/ (or bench/fanout.sh).
func BenchmarkFanout(b *testing.B) {
	dir := b.TempDir()
	bins := build(b, dir, "../bench/floodagent", "../cmd/acpmux")
	agent, acpmux := bins[0], bins[1]
	const n = 200000
	for _, hosts := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("hosts=%d", hosts), func(b *testing.B) {
			var med, worst time.Duration
			var rss int64
			for b.Loop() {
				d, r := fanoutOnce(b, acpmux, agent, dir, hosts, n)
				slices.Sort(d)
				med, worst, rss = d[len(d)/2], d[len(d)-1], r
			}
			b.ReportMetric(med.Seconds(), "s/host-median")
			b.ReportMetric(worst.Seconds(), "s/host-max")
			b.ReportMetric(float64(rss), "maxRSS-KB")
		})
	}
}

func fanoutOnce(b *testing.B, acpmux, agent, dir string, hosts, n int) ([]time.Duration, int64) {
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("bench-token"), 0o600)
	cmd := exec.Command(acpmux, "run", "--listen", "127.0.0.1:0", "--token-file", tokenFile, "--state", ":memory:",
		"--host-queue", fmt.Sprint(n+16), "--log-level", "info", "--", agent, "-n", fmt.Sprint(n))
	ideIn, _ := cmd.StdinPipe()
	ideOut, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	addr := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	ide := bufio.NewReaderSize(ideOut, 1<<20)
	call := func(line string) {
		io.WriteString(ideIn, line+"\n")
		for {
			l, err := ide.ReadBytes('\n')
			if err != nil {
				b.Fatalf("ide: %v", err)
			}
			if bytes.Contains(l, []byte(`"result"`)) {
				return
			}
		}
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	call(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)

	conns := make([]*websocket.Conn, hosts)
	for i := range conns {
		c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/acp", http.Header{"Authorization": {"Bearer bench-token"}})
		if err != nil {
			b.Fatal(err)
		}
		c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"bench","historyPolicy":"none"}}`))
		if _, _, err := c.ReadMessage(); err != nil {
			b.Fatal(err)
		}
		conns[i] = c
	}
	durs := make([]time.Duration, hosts)
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := 0
			for got < n {
				_, m, err := c.ReadMessage()
				if err != nil {
					b.Errorf("host %d: %v after %d notifications", i, err, got)
					return
				}
				if bytes.Contains(m, []byte(`"session/update"`)) {
					got++
				}
			}
			durs[i] = time.Since(start)
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the IDE reads its copy too
		for ctx.Err() == nil {
			if _, err := ide.ReadBytes('\n'); err != nil {
				return
			}
		}
	}()
	io.WriteString(ideIn, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"bench","prompt":[{"type":"text","text":"go"}]}}`+"\n")
	wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	ideIn.Close()
	cmd.Wait()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	b.Logf("%d hosts: %s", hosts, strings.TrimSpace(fmt.Sprint(durs[:min(len(durs), 8)])))
	return durs, rss
}
