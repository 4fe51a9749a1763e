package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain makes the test binary double as the acpmux command: testscript
// puts an "acpmux" on PATH that runs Main, so script tests and tests that
// spawn acpmux as a subprocess use the code under test.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"acpmux": func() { os.Exit(Main(os.Args[1:], stdio{os.Stdin, os.Stdout, os.Stderr})) },
	})
}
