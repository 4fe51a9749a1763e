package bridge

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/acpmux/acpmux/confirm/gate"
)

// TestGateRefusedLogNamesTitleOrCommand: the "gate refused a permission
// request" log line puts a shell command in command= and, for a tool call
// without one, its title in title=.
func TestGateRefusedLogNamesTitleOrCommand(t *testing.T) {
	var buf bytes.Buffer
	b := New(&Agent{exited: make(chan struct{})}, Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	b.Blocked(gate.Blocked{SessionID: "s1", DecisionID: "d1", Command: "Edit a.go", FromTitle: true, Route: gate.RoutePlanBlock})
	b.Blocked(gate.Blocked{SessionID: "s1", DecisionID: "d2", Command: "touch x", Class: "write", Route: gate.RoutePlanBlock})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log:\n%s", buf.String())
	}
	if !strings.Contains(lines[0], `title="Edit a.go"`) || strings.Contains(lines[0], "command=") {
		t.Errorf("a tool call without a command logged %q, want title=\"Edit a.go\" and no command=", lines[0])
	}
	if !strings.Contains(lines[1], `command="touch x"`) || strings.Contains(lines[1], "title=") {
		t.Errorf("a shell command logged %q, want command=\"touch x\"", lines[1])
	}
}
