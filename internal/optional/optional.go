// Package optional records the optional test suites a go test run skipped
// (a browser, the npm SDK, the real agents, ...) and why, so that a run
// says what it did not cover instead of passing quietly. Tests call [Skip]
// instead of t.Skip; the package's TestMain calls [Run].
//
// go test ./... hides the output of a package whose tests pass, so a
// package cannot print to the end of the whole run itself. [Run] prints
// its package's line (seen with go test -v) and, when $ACPMUX_OPTIONAL_SKIPS
// names a file, appends each skip to it; .ci/run sets it and prints the
// file as one line after go test ends ([Summary]). See docs/testing.md.
package optional

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// Prefix starts the summary line.
const Prefix = "optional suites skipped: "

var (
	mu      sync.Mutex // guards skipped
	skipped []skip
)

type skip struct{ suite, why string }

// Skip records that the optional suite (a short name: "browser",
// "npm SDK", "peers") is skipped because of why, then skips t. Safe for
// concurrent use.
func Skip(t testing.TB, suite, why string) {
	t.Helper()
	mu.Lock()
	skipped = append(skipped, skip{suite, why})
	mu.Unlock()
	t.Skip(suite + " skipped: " + why)
}

// Line returns the summary of the skips recorded so far, one entry per
// suite (the first reason given for it), in the order first skipped:
// "optional suites skipped: browser (no chromium on PATH), peers (...)".
// It returns "" when nothing was skipped.
func Line() string {
	mu.Lock()
	defer mu.Unlock()
	return line(skipped)
}

func line(ss []skip) string {
	seen := map[string]bool{}
	var parts []string
	for _, s := range ss {
		if !seen[s.suite] {
			seen[s.suite] = true
			parts = append(parts, s.suite+" ("+s.why+")")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return Prefix + strings.Join(parts, ", ")
}

// EnvFile names the environment variable that holds the file where [Run]
// records the skips of every test binary of one go test run, one
// "SUITE<TAB>WHY" line each. Unset, nothing is recorded.
const EnvFile = "ACPMUX_OPTIONAL_SKIPS"

// Run runs m (a *testing.M, or what wraps it), then prints [Line] on
// stdout when a suite was skipped and appends the skips to the file named
// by $ACPMUX_OPTIONAL_SKIPS ([EnvFile]) when it is set. It returns m's
// exit status.
func Run(m interface{ Run() int }) int {
	code := m.Run()
	mu.Lock()
	ss := append([]skip(nil), skipped...)
	mu.Unlock()
	if l := line(ss); l != "" {
		fmt.Println(l)
	}
	if path := os.Getenv(EnvFile); path != "" {
		if err := appendFile(path, ss); err != nil {
			fmt.Fprintln(os.Stderr, "optional: record skips:", err)
		}
	}
	return code
}

func appendFile(path string, ss []skip) error {
	if len(ss) == 0 {
		return nil
	}
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "%s\t%s\n", s.suite, strings.ReplaceAll(s.why, "\n", " "))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil { // one write: O_APPEND keeps packages' lines apart
		f.Close()
		return err
	}
	return f.Close()
}

// Summary reads the file that [Run] appends to and returns one line for
// the whole go test run, as [Line] does for one package, or
// "optional suites skipped: none" when no test binary recorded a skip.
func Summary(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	var ss []skip
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if suite, why, ok := strings.Cut(l, "\t"); ok {
			ss = append(ss, skip{suite, why})
		}
	}
	if l := line(ss); l != "" {
		return l, nil
	}
	return Prefix + "none", nil
}
