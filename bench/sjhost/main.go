// Command sjhost is a stream-json script for benchmarks, the counterpart of
// floodhost for "acpmux stream-json": it starts the command given (acpmux
// stream-json [--include-partial-messages] -- floodagent), sends the
// initialize control request and waits for its response (the ACP session
// then exists), then sends one user message and reads, decoding every
// line, until the result. With -partial it counts the text deltas of the
// stream events and checks there are -want of them. It prints one line:
//
//	{"notifications": N, "seconds": S, "textBytes": B, "maxRSSKB": K}
//
// where seconds is the wall time from the user message to the result.
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

// line is the part of a stream-json line sjhost reads.
type line struct {
	Type  string `json:"type"`
	Event struct {
		Delta struct {
			Text string `json:"text"`
		} `json:"delta"`
	} `json:"event"`
	Message struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"message"`
}

func main() {
	want := flag.Int("want", 200000, "text deltas the turn must deliver (with -partial)")
	partial := flag.Bool("partial", false, "count stream_event text deltas")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: sjhost [-want N] [-partial] COMMAND [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "sjhost:", err)
		os.Exit(1)
	}
	r := bufio.NewScanner(stdout)
	r.Buffer(make([]byte, 1<<20), 256<<20)
	until := func(typ string) (n, textBytes int) {
		for r.Scan() {
			var l line
			if err := json.Unmarshal(r.Bytes(), &l); err != nil {
				fmt.Fprintln(os.Stderr, "sjhost: bad line:", err)
				os.Exit(1)
			}
			switch l.Type {
			case "stream_event":
				if l.Event.Delta.Text != "" {
					n++
				}
			case "assistant":
				for _, c := range l.Message.Content {
					textBytes += len(c.Text)
				}
			}
			if l.Type == typ {
				return n, textBytes
			}
		}
		fmt.Fprintln(os.Stderr, "sjhost: stdout ended before a", typ)
		os.Exit(1)
		return
	}
	fmt.Fprintln(stdin, `{"type":"control_request","request_id":"init","request":{"subtype":"initialize"}}`)
	until("control_response")
	start := time.Now()
	fmt.Fprintln(stdin, `{"type":"user","message":{"role":"user","content":"flood"},"parent_tool_use_id":null,"session_id":""}`)
	n, textBytes := until("result")
	secs := time.Since(start).Seconds()
	if *partial && n != *want {
		fmt.Fprintf(os.Stderr, "sjhost: got %d text deltas, want %d\n", n, *want)
		os.Exit(1)
	}
	stdin.Close()
	io.Copy(io.Discard, stdout)
	cmd.Wait()
	var rssKB int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rssKB = ru.Maxrss
	}
	fmt.Printf(`{"notifications": %d, "seconds": %.4f, "textBytes": %d, "maxRSSKB": %d}`+"\n", n, secs, textBytes, rssKB)
}
