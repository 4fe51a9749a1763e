// Command broadcaster is the floor of WebSocket fan-out, for benchmarks:
// it starts the agent command given after its flags, copies its own stdin
// to the agent's stdin, and writes each line of the agent's stdout to its
// own stdout and, as one text frame, to every WebSocket client connected
// to ws://ADDR/acp (github.com/coder/websocket, the library acpmux serves
// with). Each client has its own queue of up to 65,536 line batches and
// its own writer goroutine, and is registered before its handshake
// completes, so it gets every line from the moment its Dial returns; what
// clients send is discarded. It logs
// "url=http://ADDR" on stderr once listening, as acpmux does.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/coder/websocket"
)

type client struct{ q chan [][]byte }

var (
	mu      sync.Mutex
	clients []*client
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "broadcaster:", err)
		os.Exit(1)
	}
	go http.Serve(ln, http.HandlerFunc(serve))
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "broadcaster:", err)
		os.Exit(127)
	}
	fmt.Fprintf(os.Stderr, "level=INFO msg=listening url=http://%s\n", ln.Addr())
	go func() { io.Copy(stdin, os.Stdin); stdin.Close() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	var batch [][]byte
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			w.Write(line)
			batch = append(batch, line[:len(line)-1])
		}
		if err != nil || r.Buffered() == 0 || len(batch) >= 512 {
			w.Flush()
			mu.Lock()
			for _, c := range clients {
				c.q <- batch
			}
			mu.Unlock()
			batch = nil
		}
		if err != nil {
			break
		}
	}
	cmd.Wait()
}

func serve(w http.ResponseWriter, r *http.Request) {
	// The client is registered before the handshake completes: a client
	// whose Dial has returned must get every line from then on, as a host
	// attached to acpmux does.
	cl := &client{q: make(chan [][]byte, 1<<16)}
	mu.Lock()
	clients = append(clients, cl)
	mu.Unlock()
	defer func() {
		mu.Lock()
		clients = slices.DeleteFunc(clients, func(c *client) bool { return c == cl })
		mu.Unlock()
	}()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	c.SetReadLimit(64 << 20)
	ctx := c.CloseRead(context.Background())
	for {
		select {
		case batch := <-cl.q:
			for _, m := range batch {
				if c.Write(ctx, websocket.MessageText, m) != nil {
					return
				}
			}
		case <-ctx.Done():
			return
		}
	}
}
