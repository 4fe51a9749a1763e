package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/internal/leakcheck"
)

// TestMain makes the test binary double as the acpmux command: testscript
// puts an "acpmux" on PATH that runs Main, so script tests and tests that
// spawn acpmux as a subprocess use the code under test. With
// acptest.EnvScript set it is the scripted fake agent instead.
func TestMain(m *testing.M) {
	// The test binary is also the scripted fake agent, but not when it runs
	// as "acpmux" (which passes its environment on to the agent it starts).
	if filepath.Base(os.Args[0]) != "acpmux" {
		acptest.MaybeRunAgent()
		// No test reads the configuration file of the user running it, or
		// writes to the user's default state file: an acpmux started
		// without --state (and every acpmux it starts) uses one of its own.
		os.Setenv("XDG_CONFIG_HOME", filepath.Join(os.TempDir(), "acpmux-test-no-config"))
		if dir, err := os.MkdirTemp("", "acpmux-test-state-"); err == nil {
			os.Setenv("XDG_STATE_HOME", dir)
			stateDir = dir
		}
	}
	testscript.Main(optionalM{m}, map[string]func(){
		"acpmux": func() { os.Exit(Main(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})) },
		// The scripted fake agent of testdata/script (its script in
		// acptest.EnvScript); TestMain above has already run it.
		"fakeagent": func() { acptest.MaybeRunAgent(); os.Exit(98) },
	})
}

// optionalM runs the tests, reports the optional suites they skipped and
// checks that no goroutine outlived them ([leakcheck.Run]).
type optionalM struct{ m *testing.M }

func (o optionalM) Run() int {
	code := leakcheck.Run(o.m)
	if stateDir != "" {
		os.RemoveAll(stateDir)
	}
	return code
}

// stateDir is the XDG_STATE_HOME of this test run, removed at its end.
var stateDir string

// TestHelpCommand: "acpmux help X" prints the same help as "acpmux X
// --help" for every listed command, on stdout with status 0; an unknown or
// hidden command is a usage error (status 2).
func TestHelpCommand(t *testing.T) {
	for name, c := range commands {
		if c.hidden {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var out, errb, want bytes.Buffer
			code := Main([]string{"help", name}, stdio{strings.NewReader(""), &out, &errb})
			Main([]string{name, "--help"}, stdio{strings.NewReader(""), &want, io.Discard})
			if code != 0 || errb.Len() != 0 || out.Len() == 0 || out.String() != want.String() {
				t.Errorf("help %s: status %d, stderr %q, stdout %q; want 0 and the output of %s --help (%q)", name, code, errb.String(), out.String(), name, want.String())
			}
		})
	}
	for _, args := range [][]string{{"help", "frobnicate"}, {"help", "__demo-agent"}, {"help", "run", "demo"}} {
		var out, errb bytes.Buffer
		if code := Main(args, stdio{strings.NewReader(""), &out, &errb}); code != 2 || out.Len() != 0 || errb.Len() == 0 {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and a message on stderr", args, code, out.String(), errb.String())
		}
	}
	var out bytes.Buffer
	if code := Main([]string{"help"}, stdio{strings.NewReader(""), &out, io.Discard}); code != 0 || !strings.Contains(out.String(), "Commands:") {
		t.Errorf("help: status %d, stdout %q", code, out.String())
	}
}
