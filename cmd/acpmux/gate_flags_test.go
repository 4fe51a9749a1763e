package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
)

// TestPolicyFlagMalformedAtStart: a malformed --policy file is a clear
// error before anything starts.
func TestPolicyFlagMalformedAtStart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(p, []byte("[[rule]]\nname = 'x'\ndecision = 'perhaps'\n"), 0o600)
	f := gateFlags{mode: "plan", policy: p, breakerWindow: time.Minute}
	_, err := f.load([]string{"/usr/bin/agent"})
	if err == nil || !strings.Contains(err.Error(), "--policy") || !strings.Contains(err.Error(), "perhaps") {
		t.Fatalf("err = %v", err)
	}
	if _, err := (&gateFlags{mode: "yolo", breakerWindow: time.Minute}).load(nil); err == nil {
		t.Error("--mode yolo accepted")
	}
}

// TestPolicyReloadOnSIGHUP: SIGHUP loads the edited file; a malformed edit
// keeps the old rules and logs an error.
func TestPolicyReloadOnSIGHUP(t *testing.T) {
	p := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(p, []byte("[[rule]]\nname = 'one'\ndecision = 'deny'\ncommand = 'rm *'\n"), 0o600)
	g, err := (&gateFlags{mode: "default", policy: p, breakerWindow: time.Minute}).load([]string{"agent"})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	br, err := confirm.NewBroker(g.apply(confirm.Options{Logger: log}, nil))
	if err != nil {
		t.Fatal(err)
	}
	stop := g.watchReload(br, log)
	defer stop()
	waitPolicy := func(want string, rev uint64) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			pol, r := br.Policy()
			if r == rev && pol != nil && pol.Rules[0].Name == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("policy %v revision %d, want rule %s revision %d; log:\n%s", pol, r, want, rev, logs.String())
			}
		}
	}
	waitPolicy("one", 0)
	os.WriteFile(p, []byte("[[rule]]\nname = 'two'\ndecision = 'allow'\ncommand = 'ls'\n"), 0o600)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	waitPolicy("two", 1)
	os.WriteFile(p, []byte("[[rule]\nbroken"), 0o600)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "keeping the old rules"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no reload error logged:\n%s", logs.String())
		}
	}
	waitPolicy("two", 1)
}

// syncBuffer is a bytes.Buffer safe for the logger and the test.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
