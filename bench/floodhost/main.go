// Command floodhost is a minimal ACP host for benchmarks: it starts the
// agent command given after its flags, runs initialize, session/new and one
// session/prompt, decodes every message it receives as an ACP client must
// (envelope and session update), and prints one JSON line to stdout:
// {"notifications": N, "seconds": S, "maxRSSKB": K} where S is the time from
// sending the prompt to receiving its response and K the peak resident set
// of the process it started. It exits 1 if the count is not -want.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Params struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	} `json:"params"`
}

func main() {
	want := flag.Int("want", 200000, "notifications the prompt turn must deliver")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: floodhost [-want N] AGENT [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "floodhost:", err)
		os.Exit(1)
	}
	r := bufio.NewScanner(stdout)
	r.Buffer(make([]byte, 1<<20), 64<<20)
	call := func(id int, method, params string) (n int) {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		for r.Scan() {
			var m message
			if err := json.Unmarshal(r.Bytes(), &m); err != nil {
				fmt.Fprintln(os.Stderr, "floodhost: bad message:", err)
				os.Exit(1)
			}
			if m.Method == "session/update" && m.Params.Update.Content.Text != "" {
				n++
			}
			if string(m.ID) == fmt.Sprint(id) && m.Result != nil {
				return n
			}
		}
		fmt.Fprintln(os.Stderr, "floodhost: agent closed stdout early")
		os.Exit(1)
		return
	}
	call(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	call(2, "session/new", `{"cwd":"/tmp","mcpServers":[]}`)
	start := time.Now()
	n := call(3, "session/prompt", `{"sessionId":"bench","prompt":[{"type":"text","text":"flood"}]}`)
	secs := time.Since(start).Seconds()
	stdin.Close()
	io.Copy(io.Discard, stdout)
	cmd.Wait()
	var rssKB int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rssKB = ru.Maxrss // Linux: KiB, the child and its reaped descendants
	}
	var self syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	cpu := time.Duration(self.Utime.Nano() + self.Stime.Nano())
	fmt.Printf(`{"notifications": %d, "seconds": %.4f, "maxRSSKB": %d, "hostCPUSeconds": %.3f, "hostContextSwitches": %d}`+"\n",
		n, secs, rssKB, cpu.Seconds(), self.Nvcsw+self.Nivcsw)
	if n != *want {
		fmt.Fprintf(os.Stderr, "floodhost: got %d notifications, want %d\n", n, *want)
		os.Exit(1)
	}
}
