// Command fanhost measures WebSocket fan-out, for benchmarks. It starts
// the relay command given after its flags (acpmux run --listen ..., or
// bench/broadcaster), acts as its stdio IDE (initialize, session/new),
// connects -hosts WebSocket hosts to ws://ADDR/acp (ADDR from the
// "url=http://ADDR" the relay logs on stderr), attaching each to the
// session with session/attach when -attach is set, then prompts and
// prints one JSON line: {"hosts": H, "seconds": S} where S is the time
// from the prompt until the last host has received -n session/update
// notifications. With -idle it prompts nothing and prints instead the
// relay's resident set before and after the hosts connected:
// {"hosts": H, "rssBeforeKB": A, "rssAfterKB": B, "perHostKB": (B-A)/H}.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

var listenRe = regexp.MustCompile(`url=http://([^/ "]+)`)

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "fanhost: "+f+"\n", a...)
	os.Exit(1)
}

func main() {
	hosts := flag.Int("hosts", 1, "WebSocket hosts")
	n := flag.Int("n", 200000, "notifications the prompt turn delivers")
	attach := flag.Bool("attach", false, "send session/attach on each WebSocket (acpmux)")
	token := flag.String("token", "", "bearer token for the WebSocket upgrade")
	idle := flag.Bool("idle", false, "measure resident set per idle host instead of a flood")
	flag.Parse()
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	ideIn, _ := cmd.StdinPipe()
	ideOut, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		fail("%v", err)
	}
	defer func() { ideIn.Close(); cmd.Process.Kill(); cmd.Wait() }()
	addr := ""
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		fail("relay logged no url=")
	}
	go io.Copy(io.Discard, stderr)
	ide := bufio.NewReaderSize(ideOut, 1<<20)
	call := func(line string) {
		io.WriteString(ideIn, line+"\n")
		for {
			l, err := ide.ReadBytes('\n')
			if err != nil {
				fail("ide: %v", err)
			}
			if bytes.Contains(l, []byte(`"result"`)) {
				return
			}
		}
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	call(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	ctx := context.Background()
	before := rssKB(cmd.Process.Pid)
	conns := make([]*websocket.Conn, *hosts)
	for i := range conns {
		c, _, err := websocket.Dial(ctx, "ws://"+addr+"/acp", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + *token}}})
		if err != nil {
			fail("dial: %v", err)
		}
		c.SetReadLimit(64 << 20)
		if *attach {
			c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/attach","params":{"sessionId":"bench","historyPolicy":"none"}}`))
			if _, _, err := c.Read(ctx); err != nil {
				fail("attach: %v", err)
			}
		}
		conns[i] = c
	}
	if *idle {
		time.Sleep(200 * time.Millisecond) // let the relay settle its per-host state
		after := rssKB(cmd.Process.Pid)
		fmt.Printf(`{"hosts": %d, "rssBeforeKB": %d, "rssAfterKB": %d, "perHostKB": %.1f}`+"\n", *hosts, before, after, float64(after-before)/float64(*hosts))
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last time.Duration
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for got := 0; got < *n; {
				_, m, err := c.Read(ctx)
				if err != nil {
					fail("host %d: %v after %d notifications", i, err, got)
				}
				if bytes.Contains(m, []byte(`"session/update"`)) {
					got++
				}
			}
			mu.Lock()
			last = max(last, time.Since(start))
			mu.Unlock()
		}()
	}
	go io.Copy(io.Discard, ide) // the IDE reads its copy too
	io.WriteString(ideIn, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"bench","prompt":[{"type":"text","text":"go"}]}}`+"\n")
	wg.Wait()
	fmt.Printf(`{"hosts": %d, "seconds": %.4f}`+"\n", *hosts, last.Seconds())
	for _, c := range conns {
		c.CloseNow()
	}
}

// rssKB returns the resident set (KiB) of process pid, 0 if unknown.
func rssKB(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			k, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return k
		}
	}
	return 0
}
