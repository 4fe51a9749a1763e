package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acpmux/acpmux/acp/acptest"
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
	}
	testscript.Main(m, map[string]func(){
		"acpmux": func() { os.Exit(Main(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})) },
	})
}
