package main

import (
	"regexp"
	"testing"
	"time"
)

// TestDemoSessionIDsAreUniqueWithinASecond: session ids the demo agent
// makes at the same instant (two demos started in the same second) all
// differ, and keep the readable "demo-HHMMSS-" start.
func TestDemoSessionIDsAreUniqueWithinASecond(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 34, 56, 0, time.Local)
	seen := map[string]bool{}
	for range 1000 {
		id := demoSessionID(now)
		if !regexp.MustCompile(`^demo-123456-[0-9a-f]{8}$`).MatchString(id) {
			t.Fatalf("session id %q, want demo-123456- and 8 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("session id %q made twice in the same second", id)
		}
		seen[id] = true
	}
}
