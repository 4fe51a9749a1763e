package optional

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestLineOneEntryPerSuite(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   []skip
		want string
	}{
		{"none", nil, ""},
		{"one", []skip{{"browser", "no chromium on PATH"}}, "optional suites skipped: browser (no chromium on PATH)"},
		{"first reason per suite, in order", []skip{{"peers", "opt-in"}, {"browser", "no chromium"}, {"peers", "not found"}},
			"optional suites skipped: peers (opt-in), browser (no chromium)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := line(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSummaryOfSeveralBinaries: what two test binaries appended to the
// same file comes back as one line; a missing file means none skipped.
func TestSummaryOfSeveralBinaries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skips.txt")
	if got, err := Summary(path); err != nil || got != "optional suites skipped: none" {
		t.Errorf("no file: %q, %v", got, err)
	}
	appendFile(path, []skip{{"browser", "no chromium"}, {"browser", "no chromium"}})
	appendFile(path, []skip{{"npm SDK", "set ACPMUX_NPM_DIR"}, {"peers", "line\nbreak"}})
	got, err := Summary(path)
	if want := "optional suites skipped: browser (no chromium), npm SDK (set ACPMUX_NPM_DIR), peers (line break)"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

// TestGoTestRunEndsWithSkipLine runs go test -v on a package whose test
// calls Skip, with $ACPMUX_OPTIONAL_SKIPS set, then the summary command on
// that file, as .ci/run does: the package prints its line and the summary
// prints one line for the run.
func TestGoTestRunEndsWithSkipLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test and go run")
	}
	if os.Getenv("OPTIONAL_FIXTURE") == "1" {
		Skip(t, "fixture", "asked to skip")
	}
	if os.Getenv("OPTIONAL_FIXTURE") != "" {
		return
	}
	file := filepath.Join(t.TempDir(), "skips.txt")
	cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "^TestGoTestRunEndsWithSkipLine$", ".")
	cmd.Env = append(os.Environ(), "OPTIONAL_FIXTURE=1", EnvFile+"="+file)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\noptional suites skipped: fixture (asked to skip)\n") {
		t.Errorf("go test -v output has no skip line:\n%s", out)
	}
	sum := exec.Command("go", "run", "./summary", file)
	line, err := sum.Output()
	if err != nil {
		t.Fatalf("summary: %v", err)
	}
	if got := string(line); got != "optional suites skipped: fixture (asked to skip)\n" {
		t.Errorf("summary = %q", got)
	}
}

// TestMain fails the run when a goroutine a test started outlives the
// tests (internal/leakcheck imports this package, so the check is goleak's
// own here).
func TestMain(m *testing.M) { goleak.VerifyTestMain(runM{m}) }

// runM runs the tests through [Run].
type runM struct{ m *testing.M }

func (r runM) Run() int { return Run(r.m) }
