package classify_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps checks that classify imports only the standard library and
// mvdan.cc/sh/v3: the package is pure (see doc.go).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/acpmux/acpmux/classify" || strings.HasPrefix(p, "mvdan.cc/sh/v3/") {
			continue
		}
		t.Errorf("classify depends on %s; only the standard library and mvdan.cc/sh/v3 are allowed", p)
	}
}
