package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// serverFDs is the file descriptor limit (ulimit -n) of the acpmux under
// attack: fewer than the slow clients, so that a server which keeps each
// of them open runs out of descriptors, and more than the default
// --max-connections plus what acpmux needs besides.
const serverFDs = 256

// slowClients is the size of the flood.
const slowClients = 400

// A flood of 400 slow clients without the token, three in four sending a
// body one byte every two seconds (half with a token that looks right, half
// with garbage) and one in four sending its headers that slowly, delays
// neither a page load, nor an /acp WebSocket upgrade, nor an API call by
// more than a second, in an acpmux limited to 256 file descriptors and the
// default --max-connections. Loopback only.
func TestSlowClientsDoNotDelayALegitimateUser(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < 2*slowClients {
		t.Skipf("the test needs ulimit -n of at least %d for its clients (have %d)", 2*slowClients, lim.Cur)
	}
	wrap := []string{"sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$@"`, serverFDs), "sh"}
	r := startRelayProcessWrapped(t, wrap, "waiteof\n", nil, "--state", ":memory:")
	addr := strings.TrimPrefix(r.apiURL, "http://")

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(slowClients)
	for i := range slowClients {
		wg.Go(func() { slowClient(ctx, addr, i, &started) })
	}
	t.Cleanup(func() { stop(); wg.Wait() })
	started.Wait()

	check := func(what string, do func() error) {
		t.Helper()
		for range 3 {
			start := time.Now()
			err := do()
			d := time.Since(start)
			t.Logf("%s under the flood: %v", what, d)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if d > time.Second {
				t.Errorf("%s took %v under the flood, want under 1s", what, d)
			}
		}
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) func() error {
		return func() error {
			req, _ := http.NewRequest("GET", r.apiURL+path, nil)
			req.Header.Set("Authorization", "Bearer "+r.token)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	}
	check("GET / (the page)", get("/"))
	check("GET /v1/sessions", get("/v1/sessions"))
	check("/acp upgrade", func() error {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(dctx, "ws://"+addr+"/acp", &websocket.DialOptions{
			HTTPClient:   client,
			HTTPHeader:   http.Header{"Authorization": {"Bearer " + r.token}},
			Subprotocols: []string{"acp"},
		})
		if err != nil {
			return err
		}
		return c.CloseNow()
	})
}

// slowClient is one attacker: it connects and trickles a request one byte
// every two seconds, and connects again half a second after the server
// closes it, until ctx is done. It calls started.Done after its first
// connection has sent what it sends at once.
func slowClient(ctx context.Context, addr string, i int, started *sync.WaitGroup) {
	auth := "Authorization: Bearer 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\r\n"
	if i%2 == 1 {
		auth = "Authorization: Bearer not-a-token\r\nCookie: acpmux_token=%00garbage\r\n"
	}
	head := "POST /v1/sessions/s/decisions/d HTTP/1.1\r\nHost: " + addr + "\r\n" + auth +
		"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
	slowHead := i%4 == 3
	first := true
	for ctx.Err() == nil {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			var pending string
			if slowHead {
				_, err = io.WriteString(c, head[:10])
				pending = head[10:]
			} else {
				_, err = io.WriteString(c, head+"{")
				pending = strings.Repeat(" ", 4095)
			}
			if first {
				first = false
				started.Done()
			}
			for err == nil && ctx.Err() == nil && pending != "" {
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				var b [512]byte
				if _, err = c.Read(b[:]); err == nil {
					break // a response: the server is done with us
				}
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					break
				}
				_, err = io.WriteString(c, pending[:1])
				pending = pending[1:]
			}
			c.Close()
		} else if first {
			first = false
			started.Done()
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}
