package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

func init() {
	register(command{name: "version", summary: "print the version and source revision this binary was built from", run: versionMain})
}

const versionUsage = `Usage: acpmux version [--json]

Prints the module version and the source revision of this binary, as the Go
toolchain recorded them at build time (runtime/debug.ReadBuildInfo):

  acpmux v0.2.0 go1.26.8                  go install ...@v0.2.0
  acpmux v0.0.0-20261201084639-a5816d92a4e6+dirty a5816d92a4e6f8a13e1b563c8c13c3b510430a25 modified go1.26.8
                                          go build in a git checkout
  acpmux (devel) go1.26.8                 go run, go test, -buildvcs=false

The version is the module version the toolchain stamped: a release tag, a
pseudo-version from the checkout's commit (with "+dirty" for uncommitted
changes), or "(devel)" when it recorded none. The revision (vcs.revision)
is empty when the build recorded none (go run, go test, -buildvcs=false, a
copy without .git, a git worktree); "modified" means the checkout had
uncommitted changes (vcs.modified).

With --json, one object: {"version": "(devel)", "revision": "a5816d9...",
"modified": false, "go": "go1.26.8"}; revision is "" when unknown.

Flags:
`

// version is the module version of this binary ("(devel)" when the
// toolchain recorded none); agentInfo, clientInfo and the decisions API report it.
var version = buildVersion().Version

// versionInfo is what "acpmux version" prints.
type versionInfo struct {
	Version  string `json:"version"`  // module version, "(devel)" when not recorded
	Revision string `json:"revision"` // vcs.revision, "" when not recorded
	Modified bool   `json:"modified"` // vcs.modified: uncommitted changes at build time
	Go       string `json:"go"`       // the toolchain that built the binary
}

// buildVersion reads this binary's build information.
func buildVersion() versionInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versionInfo{Version: "(unknown)", Go: runtime.Version()}
	}
	return versionFrom(info)
}

// versionFrom extracts the version, revision and modified flag from info.
func versionFrom(info *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: info.Main.Version, Go: info.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (v versionInfo) String() string {
	s := "acpmux " + v.Version
	if v.Revision != "" {
		s += " " + v.Revision
	}
	if v.Modified {
		s += " modified"
	}
	return s + " " + v.Go
}

func versionMain(args []string, s stdio) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, `print one JSON object with the members "version", "revision", "modified" and "go"`)
	help := func(w io.Writer) { fmt.Fprint(w, versionUsage); writeFlags(w, fs) }
	if done, code := parseArgs("version", fs, s, help, func() error { return fs.Parse(args) }); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "acpmux version: unexpected argument %q\nRun 'acpmux version --help' for usage.\n", fs.Arg(0))
		return 2
	}
	v := buildVersion()
	if *asJSON {
		b, _ := json.Marshal(v) // strings and a bool: cannot fail
		fmt.Fprintf(s.out, "%s\n", b)
		return 0
	}
	fmt.Fprintln(s.out, v)
	return 0
}
