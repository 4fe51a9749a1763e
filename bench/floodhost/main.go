// Command floodhost is a minimal ACP host for benchmarks: it starts the
// agent command given after its flags (the agent itself, or a relay in
// front of it), runs initialize, -sessions session/new and one
// session/prompt per session, and prints one JSON line to stdout:
//
//	{"notifications": N, "seconds": S, "maxRSSKB": K, "hwmKB": H, "procCPUms": C, ...}
//
// where S is the time from sending the first prompt to receiving the last
// prompt's response, K the peak resident set of the process it started and
// its reaped descendants (getrusage), and H that process's own peak (VmHWM,
// read before its stdin is closed); procCPUms and procMinorFaults are that
// process's own CPU time and minor page faults, read at the same time. It exits 1 if a prompt turn did not
// deliver -want notifications.
//
// Modes: by default it decodes every message with encoding/json into the
// fields an ACP client shows (envelope, sessionUpdate, content text), the
// work a real host does; -light only counts lines (a response is a line
// starting {"jsonrpc":"2.0","id":, as floodagent and acpmux write them);
// -latency is -light and also reads the "t=<unix ns>" floodagent -rate puts
// in each chunk, and adds the delay's p50, p99 and max in µs to the output.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

var responsePrefix = []byte(`{"jsonrpc":"2.0","id":`)

func main() {
	want := flag.Int("want", 200000, "notifications each prompt turn must deliver")
	light := flag.Bool("light", false, "only count lines, decode nothing")
	latency := flag.Bool("latency", false, "like -light, and measure each chunk's delay from its t=<unix ns>")
	sessions := flag.Int("sessions", 1, "sessions to create and prompt, one after the other")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: floodhost [-want N] [-light|-latency] [-sessions K] AGENT [ARGS...]")
		os.Exit(2)
	}
	*light = *light || *latency
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
	var delays []int64
	call := func(id int, method, params string) (n int, result []byte) {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		idb := []byte(strconv.Itoa(id) + `,"result"`)
		for r.Scan() {
			line := r.Bytes()
			if *light {
				if !bytes.HasPrefix(line, responsePrefix) {
					n++
					if *latency {
						if i := bytes.Index(line, []byte(`"t=`)); i >= 0 {
							now := time.Now().UnixNano()
							rest := line[i+3:]
							if j := bytes.IndexByte(rest, ' '); j > 0 {
								if t, err := strconv.ParseInt(string(rest[:j]), 10, 64); err == nil {
									delays = append(delays, now-t)
								}
							}
						}
					}
					continue
				}
				if bytes.HasPrefix(line[len(responsePrefix):], idb) {
					var m message
					json.Unmarshal(line, &m)
					return n, m.Result
				}
				continue
			}
			var m message
			if err := json.Unmarshal(line, &m); err != nil {
				fmt.Fprintln(os.Stderr, "floodhost: bad message:", err)
				os.Exit(1)
			}
			if m.Method == "session/update" && m.Params.Update.Content.Text != "" {
				n++
			}
			if string(m.ID) == fmt.Sprint(id) && m.Result != nil {
				return n, m.Result
			}
		}
		fmt.Fprintln(os.Stderr, "floodhost: agent closed stdout early")
		os.Exit(1)
		return
	}
	call(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	var sids []string
	for k := range *sessions {
		_, res := call(2+k, "session/new", `{"cwd":"/tmp","mcpServers":[]}`)
		var s struct{ SessionID string }
		json.Unmarshal(res, &s)
		sids = append(sids, s.SessionID)
	}
	start := time.Now()
	total := 0
	for k, sid := range sids {
		q, _ := json.Marshal(sid)
		n, _ := call(100+k, "session/prompt", `{"sessionId":`+string(q)+`,"prompt":[{"type":"text","text":"flood"}]}`)
		if n != *want {
			fmt.Fprintf(os.Stderr, "floodhost: got %d notifications in session %s, want %d\n", n, sid, *want)
			os.Exit(1)
		}
		total += n
	}
	secs := time.Since(start).Seconds()
	hwm := vmHWM(cmd.Process.Pid)
	cpuMS, faults := procCPU(cmd.Process.Pid)
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
	lat := ""
	if *latency && len(delays) > 0 {
		slices.Sort(delays)
		at := func(p float64) float64 { return float64(delays[int(p*float64(len(delays)-1))]) / 1e3 }
		lat = fmt.Sprintf(`, "p50us": %.1f, "p99us": %.1f, "maxus": %.1f`, at(0.5), at(0.99), float64(delays[len(delays)-1])/1e3)
	}
	fmt.Printf(`{"notifications": %d, "seconds": %.4f, "maxRSSKB": %d, "hwmKB": %d, "hostCPUSeconds": %.3f, "hostContextSwitches": %d, "procCPUms": %.1f, "procMinorFaults": %d%s}`+"\n",
		total, secs, rssKB, hwm, cpu.Seconds(), self.Nvcsw+self.Nivcsw, cpuMS, faults, lat)
}

// procCPU returns the CPU time (ms) the threads of process pid have run,
// from /proc/PID/task/*/schedstat (nanoseconds, so precise for a short
// run; threads that already exited are not counted), and its minor page
// faults (/proc/PID/stat). It is read with VmHWM, before the process's
// stdin is closed: the process itself only, not the agent it started.
func procCPU(pid int) (ms float64, minorFaults int64) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			ms += float64(ns) / 1e6
		}
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if i := bytes.LastIndexByte(b, ')'); i >= 0 {
		// After "pid (comm)": state is field 3, minflt field 10.
		if f := strings.Fields(string(b[i+1:])); len(f) > 7 {
			minorFaults, _ = strconv.ParseInt(f[7], 10, 64)
		}
	}
	return ms, minorFaults
}

// vmHWM returns the peak resident set (KiB) of process pid, 0 if unknown.
func vmHWM(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			k, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return k
		}
	}
	return 0
}
