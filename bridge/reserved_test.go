package bridge_test

import (
	"strings"
	"testing"

	"github.com/acpmux/acpmux/bridge"
)

// TestAgentReservedMethodLoggedOncePerMethod: an agent repeating a message
// in acpmux's namespace is logged once per method, not once per message,
// and none of them reaches the host.
func TestAgentReservedMethodLoggedOncePerMethod(t *testing.T) {
	script := `recv initialize
send {"jsonrpc":"2.0","method":"_acpmux/turn_cancelled","params":{"sessionId":"s1","reason":"a"}}
send {"jsonrpc":"2.0","method":"_acpmux/turn_cancelled","params":{"sessionId":"s1","reason":"b"}}
send {"jsonrpc":"2.0","method":"_acpmux/permission_resolved","params":{"sessionId":"s1"}}
send {"jsonrpc":"2.0","method":"_acpmux/turn_cancelled","params":{"sessionId":"s1","reason":"c"}}
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
`
	host := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
#!wait 1
`
	got := runScripted(t, script, host, bridge.Options{})
	if len(got.host) != 1 || strings.Contains(got.host[0], "_acpmux/") {
		t.Errorf("host received %q, want only the initialize response", got.host)
	}
	for method, want := range map[string]int{"_acpmux/turn_cancelled": 1, "_acpmux/permission_resolved": 1} {
		if n := strings.Count(got.stderr, "method="+method); n != want {
			t.Errorf("%s logged %d times, want %d; stderr:\n%s", method, n, want, got.stderr)
		}
	}
}
