// Command floodagent is a minimal ACP agent for benchmarks: it answers
// initialize and session/new, and answers each session/prompt after writing
// N session/update agent_message_chunk notifications (N from -n, default
// 200,000) for the prompt's session, as fast as its stdout takes them, or
// at a steady -rate per second with each chunk's text starting with the
// wall-clock time it was written ("t=<unix ns> ", for floodhost -latency).
// The first session/new gets sessionId "bench", later ones "bench-2", ...
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	n := flag.Int("n", 200000, "notifications per prompt turn")
	rate := flag.Int("rate", 0, "notifications per second (0: as fast as possible)")
	flag.Parse()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	sessions := 0
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}`+"\n", id)
		case "session/new":
			sessions++
			sid := "bench"
			if sessions > 1 {
				sid = "bench-" + strconv.Itoa(sessions)
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"sessionId":%q}}`+"\n", id, sid)
		case "session/prompt":
			sid, _ := json.Marshal(m.Params.SessionID)
			start := time.Now()
			for i := 0; i < *n; i++ {
				out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`)
				out.Write(sid)
				out.WriteString(`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
				if *rate > 0 {
					if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(*rate))); d > 0 {
						time.Sleep(d)
					}
					out.WriteString("t=" + strconv.FormatInt(time.Now().UnixNano(), 10) + " ")
				}
				out.WriteString(`token `)
				out.WriteString(strconv.Itoa(i))
				out.WriteString(` of the flood, some words to make it a typical chunk of an answer streamed by a model"}}}}` + "\n")
				if *rate > 0 {
					out.Flush()
				}
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", id)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", id)
		}
		out.Flush()
	}
}
