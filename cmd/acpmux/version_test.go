package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		info debug.BuildInfo
		want versionInfo
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.2.0"}},
			versionInfo{Version: "v0.2.0", Go: "go1.26.8"}},
		{"checkout with changes", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "a5816d92"}, {Key: "vcs.modified", Value: "true"}}},
			versionInfo{Version: "(devel)", Revision: "a5816d92", Modified: true, Go: "go1.26.8"}},
		{"clean checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201084639-a5816d92a4e6"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "a5816d92"}, {Key: "vcs.modified", Value: "false"}}},
			versionInfo{Version: "v0.0.0-20261201084639-a5816d92a4e6", Revision: "a5816d92", Go: "go1.26.8"}},
		{"no main version", debug.BuildInfo{GoVersion: "go1.26.8"}, versionInfo{Version: "(devel)", Go: "go1.26.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionFrom(&tt.info); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestVersionMatchesGoVersionM builds the real binary and checks that
// "acpmux version --json" reports the module version and vcs.revision that
// "go version -m" reads from the same file, and that the text form and
// --version agree with it.
func TestVersionMatchesGoVersionM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "acpmux")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var want versionInfo
	for _, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			want.Version = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision="):
			want.Revision = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("acpmux version --json: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("version --json: %v in %q", err, out)
	}
	if got["version"] != want.Version || got["revision"] != want.Revision {
		t.Errorf("version --json = %s, want version %q revision %q (from go version -m)", out, want.Version, want.Revision)
	}
	text, _ := exec.Command(bin, "version").Output()
	alias, _ := exec.Command(bin, "--version").Output()
	if !strings.HasPrefix(string(text), "acpmux "+want.Version) || !bytes.Equal(text, alias) {
		t.Errorf("version = %q, --version = %q; want both to start with %q", text, alias, "acpmux "+want.Version)
	}
}

func TestVersionUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"version", "extra"}, stdio{nil, &out, &errb}); code != 2 {
		t.Errorf("version extra: status %d, want 2", code)
	}
	if code := Main([]string{"version", "--help"}, stdio{nil, &out, &errb}); code != 0 || !contains(out.String(), "--json") {
		t.Errorf("version --help: status %d, output %q", code, out.String())
	}
}
