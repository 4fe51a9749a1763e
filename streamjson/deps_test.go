package streamjson_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps checks that streamjson imports only the standard library and
// github.com/acpmux/acpmux/acp (with what acp itself needs): the package
// is pure (see doc.go) and must not reach into bridge, confirm or classify.
func TestDeps(t *testing.T) {
	list := func(pkg string) map[string]bool {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		m := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			m[p] = true
		}
		return m
	}
	allowed := list("github.com/acpmux/acpmux/acp")
	direct, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(direct)) {
		if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") && p != "github.com/acpmux/acpmux/acp" {
			t.Errorf("streamjson imports %s; only the standard library and acp are allowed", p)
		}
	}
	for p := range list(".") {
		if p != "github.com/acpmux/acpmux/streamjson" && !allowed[p] {
			t.Errorf("streamjson depends on %s, which acp does not need", p)
		}
	}
}
