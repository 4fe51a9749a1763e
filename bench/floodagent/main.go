// Command floodagent is a minimal ACP agent for benchmarks: it answers
// initialize and session/new, and answers each session/prompt after writing
// N session/update agent_message_chunk notifications (N from -n, default
// 200,000), as fast as its stdout takes them.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
)

func main() {
	n := flag.Int("n", 200000, "notifications per prompt turn")
	flag.Parse()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		id := string(m.ID)
		switch m.Method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}`+"\n", id)
		case "session/new":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"bench"}}`+"\n", id)
		case "session/prompt":
			for i := 0; i < *n; i++ {
				out.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"bench","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"token `)
				out.WriteString(strconv.Itoa(i))
				out.WriteString(` of the flood, some words to make it a typical chunk"}}}}` + "\n")
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", id)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", id)
		}
		out.Flush()
	}
}
