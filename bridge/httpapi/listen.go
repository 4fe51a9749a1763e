package httpapi

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// CheckListenAddr applies the listen-address policy of --listen: addr
// (host:port) must be a loopback address (127.0.0.0/8, ::1, "localhost")
// unless allowRemote (--allow-remote) is set. It reports whether addr is
// reachable from other machines (an empty or unspecified host such as
// ":7777" or "0.0.0.0:7777" listens on every interface, and so does a LAN
// address), so that the caller logs a warning. A port that is not a
// number from 0 to 65535 is an error too. The error names the flag.
func CheckListenAddr(addr string, allowRemote bool) (remote bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if port == "" {
		return false, fmt.Errorf("listen address %q: missing port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return false, fmt.Errorf("listen address %q: the port must be a number from 0 to 65535 (0 picks a free one)", addr)
	}
	remote = !isLoopback(host)
	if remote && !allowRemote {
		return true, fmt.Errorf("listen address %q is not loopback: pass --allow-remote to expose the decisions API to other machines", addr)
	}
	return remote, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
