package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/coder/websocket"

	"github.com/acpmux/acpmux/bridge/httpapi"
)

func init() {
	register(command{name: "attach", summary: "connect a local stdio ACP client to a running acpmux over WebSocket", run: attachMain})
}

const attachUsage = `Usage: acpmux attach [flags] URL

Connects this process's stdin and stdout (newline-delimited ACP, as an
ACP client expects of an agent) to the /acp WebSocket of a running
"acpmux run --listen", so a second IDE or any stdio ACP client becomes one
more host of the same agent. URL is ws://HOST:PORT/acp (or http://HOST:PORT,
to which /acp is added). Use it as the client's agent command, e.g.

  example-client acpmux attach --token-file ~/.local/state/acpmux/token ws://127.0.0.1:7777/acp

The client's initialize is answered from the agent's cached result; join an
existing session with session/attach (docs/protocol.md) or create a new one.

Exit status: 0 when stdin ends or acpmux closes normally; 1 when the
connection fails; 2 usage error; SIGTERM or SIGINT exits quietly with 143
or 130 (128+N, as a shell reports it) and leaves the relay running.

Flags:
`

func attachMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("attach", flag.ContinueOnError)
	tokenFile := fs.String("token-file", "", "file with the bearer token of the acpmux to attach to (default $XDG_STATE_HOME/acpmux/token)")
	maxLine := fs.Int("max-line-bytes", 64<<20, "largest message accepted in either direction, in bytes")
	help := func(w io.Writer) { fmt.Fprint(w, attachUsage); writeFlags(w, fs) }
	if done, code := parseArgs("attach", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.err, "acpmux attach: want exactly one URL; usage: acpmux attach [flags] URL")
		return 2
	}
	url := fs.Arg(0)
	switch {
	case strings.HasPrefix(url, "http://"):
		url = "ws://" + strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	case strings.HasPrefix(url, "https://"):
		url = "wss://" + strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/")
	case strings.HasPrefix(url, "ws://"), strings.HasPrefix(url, "wss://"):
	default:
		fmt.Fprintf(s.err, "acpmux attach: URL %q: want ws://HOST:PORT/acp\n", url)
		return 2
	}
	if !strings.HasSuffix(url, "/acp") {
		url += "/acp"
	}
	path := *tokenFile
	if path == "" {
		p, err := httpapi.DefaultTokenPath()
		if err != nil {
			fmt.Fprintln(s.err, "acpmux attach: --token-file:", err)
			return 2
		}
		path = p
	}
	tok, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(tok)) == "" {
		fmt.Fprintf(s.err, "acpmux attach: read token: %v (pass --token-file, the file acpmux run --listen wrote)\n", errOr(err, "empty file"))
		return 1 // as acpmux decisions: a file problem, not a usage error
	}
	ctx, received, stop := signalContext()
	defer stop()
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + strings.TrimSpace(string(tok))}},
		Subprotocols: []string{"acp"},
	})
	if sig := received(); sig != 0 {
		return signalStatus(sig) // SIGTERM: 143, quietly
	}
	if err != nil {
		if resp != nil && refusedToken(url, path, resp.StatusCode) != "" {
			fmt.Fprintf(s.err, "acpmux attach: %s\n", refusedToken(url, path, resp.StatusCode)) // hints.go
		} else if resp != nil && resp.StatusCode == http.StatusNotFound {
			fmt.Fprintf(s.err, "acpmux attach: %s: %s: nothing serves ACP there; attach to a bridge started with acpmux run --listen (acpmux inbox has no agent, so no /acp)\n", url, resp.Status)
		} else if resp != nil {
			fmt.Fprintf(s.err, "acpmux attach: %s: %s\n", url, resp.Status)
		} else {
			fmt.Fprintf(s.err, "acpmux attach: %v\n", unreachableWS(url, err)) // hints.go
		}
		return 1
	}
	c.SetReadLimit(int64(*maxLine))
	code := pump(ctx, c, s, *maxLine)
	if sig := received(); sig != 0 {
		return signalStatus(sig) // SIGTERM: 143, SIGINT: 130, quietly
	}
	return code
}

// pump copies stdin lines to text frames and text frames to stdout lines
// until either side ends or ctx is done. When ctx is done it closes the
// WebSocket normally and returns 0 without a message.
func pump(parent context.Context, c *websocket.Conn, s stdio, maxLine int) int {
	// Reads and writes do not end with parent: coder/websocket drops the
	// connection when a read's context ends, and a signal must close it
	// with the normal close handshake instead.
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	defer cancel()
	errc := make(chan error, 2)
	go func() {
		sc := bufio.NewScanner(s.in)
		sc.Buffer(make([]byte, 64<<10), maxLine+1)
		for sc.Scan() {
			if len(strings.TrimSpace(sc.Text())) == 0 {
				continue
			}
			if err := c.Write(ctx, websocket.MessageText, sc.Bytes()); err != nil {
				errc <- err
				return
			}
		}
		errc <- errors.Join(sc.Err(), errStdinClosed)
	}()
	go func() {
		w := bufio.NewWriter(s.out)
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				errc <- err
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			w.Write(data)
			w.WriteByte('\n')
			if err := w.Flush(); err != nil {
				errc <- err
				return
			}
		}
	}()
	var err error
	select {
	case err = <-errc:
	case <-parent.Done():
	}
	c.Close(websocket.StatusNormalClosure, "")
	cancel()
	switch {
	case parent.Err() != nil: // stopped by a signal: the caller says how
		return 0
	case errors.Is(err, errStdinClosed), websocket.CloseStatus(err) == websocket.StatusNormalClosure,
		websocket.CloseStatus(err) == websocket.StatusGoingAway: // acpmux stopping: the agent is done
		return 0
	case websocket.CloseStatus(err) != -1:
		fmt.Fprintf(s.err, "acpmux attach: closed by acpmux: %v\n", err)
		return 1
	default:
		fmt.Fprintln(s.err, "acpmux attach:", err)
		return 1
	}
}

var errStdinClosed = errors.New("stdin closed")

func errOr(err error, s string) any {
	if err != nil {
		return err
	}
	return s
}
