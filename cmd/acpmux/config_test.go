package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const precedenceConfig = `# acpmux settings
[run]
host-queue = 7
grace = "3s"
log-level = "debug"
allow-remote = true
`

// TestConfigPrecedence: a flag's default < the configuration file < the
// flag's environment variable < the command line, for run's flags of each
// type (integer, duration, string, boolean).
func TestConfigPrecedence(t *testing.T) {
	path := writeConfig(t, precedenceConfig)
	fs, f := runFlagSet()
	if err := fs.Parse([]string{"--config", path, "--host-queue", "9"}); err != nil {
		t.Fatal(err)
	}
	origins, got, err := applyConfig("run", fs)
	if err != nil || got != path {
		t.Fatalf("applyConfig: %q, %v", got, err)
	}
	if f.queueLen != 9 || f.grace != 3*time.Second || f.logLevel != "debug" || !f.allowRemote || f.maxLineBytes != bridge.DefaultMaxLineBytes {
		t.Errorf("got host-queue %d grace %v log-level %q allow-remote %v max-line-bytes %d; want 9 (flag), 3s, debug, true (file), %d (default)",
			f.queueLen, f.grace, f.logLevel, f.allowRemote, f.maxLineBytes, bridge.DefaultMaxLineBytes)
	}
	want := map[string]origin{"host-queue": fromFlag, "grace": origin(path + ":4"), "log-level": origin(path + ":5"), "max-line-bytes": fromDefault}
	for k, o := range want {
		if origins[k] != o {
			t.Errorf("origin of %s: %q, want %q", k, origins[k], o)
		}
	}

	t.Setenv("ACPMUX_LOG", "warn")
	fs, f = runFlagSet()
	fs.Parse([]string{"--config", path})
	origins, _, err = applyConfig("run", fs)
	if err != nil || f.logLevel != "warn" || origins["log-level"] != "env ACPMUX_LOG" {
		t.Errorf("with ACPMUX_LOG=warn: log-level %q from %q (%v); want warn from env ACPMUX_LOG", f.logLevel, origins["log-level"], err)
	}
}

// TestConfigDefaultPath: without --config the file is
// $XDG_CONFIG_HOME/acpmux/config.toml, and a missing one is no error.
func TestConfigDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	fs, _ := runFlagSet()
	fs.Parse(nil)
	if _, path, err := applyConfig("run", fs); err != nil || path != "" {
		t.Fatalf("no file: %q, %v; want none and no error", path, err)
	}
	os.MkdirAll(filepath.Join(dir, "acpmux"), 0o700)
	os.WriteFile(filepath.Join(dir, "acpmux", "config.toml"), []byte("[run]\nhost-queue = 5\n"), 0o600)
	fs, f := runFlagSet()
	fs.Parse(nil)
	if _, path, err := applyConfig("run", fs); err != nil || f.queueLen != 5 || path != filepath.Join(dir, "acpmux", "config.toml") {
		t.Errorf("XDG file: %q, %v, host-queue %d; want it read and 5", path, err, f.queueLen)
	}
}

// TestConfigErrorsNameKeyAndLine: an unknown key, an unknown table, a key
// outside a table and a value of the wrong type are errors naming the key
// and its line; "acpmux run" exits 2 with that message and starts nothing.
func TestConfigErrorsNameKeyAndLine(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown key", "[run]\nhost-queue = 7\n\nlisten-addr = \"x\"\n", `:4: [run]: unknown key "listen-addr"`},
		{"unknown table", "# x\n[frobnicate]\nx = 1\n", `:2: unknown key "frobnicate"`},
		{"command without settings", "[classify]\nx = 1\n", `:1: [classify]: acpmux classify takes no settings`},
		{"top-level key", "listen = \"127.0.0.1:1\"\n", `:1: unknown key "listen"`},
		{"wrong type", "[run]\n\"host-queue\" = \"seven\"\n", `:2: [run] host-queue: want an integer`},
		{"bad duration", "[demo]\n  grace = \"soon\"\n", `:2: [demo] grace: invalid value`},
		{"nested table", "[run]\n[run.extra]\nx = 1\n", `:2: [run]: unknown key "extra"`},
		{"config in config", "[run]\nconfig = \"/x\"\n", `:2: [run]: unknown key "config"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.text)
			var out, errb bytes.Buffer
			code := Main([]string{"run", "--config", path, "--", "/nonexistent-agent"}, stdio{strings.NewReader(""), &out, &errb})
			if code != 2 || !strings.Contains(errb.String(), path+tc.want) {
				t.Errorf("status %d, stderr %q; want 2 and %q", code, errb.String(), path+tc.want)
			}
		})
	}
}

// TestConfigCommandPrintsOrigins: "acpmux config [--config FILE] COMMAND
// FLAGS" prints COMMAND's table with every flag's effective value, typed
// as the file takes it, and where it came from.
func TestConfigCommandPrintsOrigins(t *testing.T) {
	path := writeConfig(t, precedenceConfig)
	var out, errb bytes.Buffer
	if code := Main([]string{"config", "--config", path, "run", "--host-queue", "9", "--listen", "127.0.0.1:7777"}, stdio{strings.NewReader(""), &out, &errb}); code != 0 {
		t.Fatalf("status %d, stderr %q", code, errb.String())
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if k, rest, ok := strings.Cut(l, " = "); ok {
			lines[k] = strings.Join(strings.Fields(rest), " ")
		}
	}
	for k, want := range map[string]string{
		"host-queue":   "9 # flag",
		"listen":       `"127.0.0.1:7777" # flag`,
		"grace":        `"3s" # ` + path + ":4",
		"allow-remote": "true # " + path + ":6",
		"mode":         `"default" # default`,
	} {
		if lines[k] != want {
			t.Errorf("%s: %q, want %q", k, lines[k], want)
		}
	}
	if _, ok := lines["config"]; ok || !strings.HasPrefix(out.String(), "# acpmux run: effective settings; configuration file "+path+"\n[run]\n") {
		t.Errorf("output:\n%s", out.String())
	}
	out.Reset()
	if code := Main([]string{"config", "--config", path, "demo"}, stdio{strings.NewReader(""), &out, &errb}); code != 0 || !strings.Contains(out.String(), "[demo]\n") || !strings.Contains(out.String(), `choose = "ask"`) {
		t.Errorf("config demo: %d %q", code, out.String())
	}
	if code := Main([]string{"config", "classify"}, stdio{strings.NewReader(""), &out, &errb}); code != 2 {
		t.Errorf("config classify: status %d, want 2", code)
	}
}

// TestConfigRepeatableFlag: a repeatable flag (--notify) takes an array of
// strings in the file, and the command line replaces the array.
func TestConfigRepeatableFlag(t *testing.T) {
	path := writeConfig(t, "[run]\nnotify = [\"https://a.example/t\", \"https://b.example/t\"]\n")
	fs, f := runFlagSet()
	fs.Parse([]string{"--config", path})
	if _, _, err := applyConfig("run", fs); err != nil || strings.Join(f.notify, " ") != "https://a.example/t https://b.example/t" {
		t.Errorf("from the file: %q, %v", f.notify, err)
	}
	fs, f = runFlagSet()
	fs.Parse([]string{"--config", path, "--notify", "https://c.example/t"})
	if _, _, err := applyConfig("run", fs); err != nil || strings.Join(f.notify, " ") != "https://c.example/t" {
		t.Errorf("with --notify on the command line: %q, %v; want only it", f.notify, err)
	}
	bad := writeConfig(t, "[run]\nnotify = \"https://a.example/t\"\n")
	fs, _ = runFlagSet()
	fs.Parse([]string{"--config", bad})
	if _, _, err := applyConfig("run", fs); err == nil || !strings.Contains(err.Error(), ":2: [run] notify: want an array of strings") {
		t.Errorf("a string for a repeatable flag: %v", err)
	}
}

// TestConfigCommandPrintsEffectiveDefaults: a setting whose default is
// resolved at start shows the value used, not "": the state file and the
// token file under $XDG_STATE_HOME, and :memory: for the demo.
func TestConfigCommandPrintsEffectiveDefaults(t *testing.T) {
	state := os.Getenv("XDG_STATE_HOME")
	for cmd, want := range map[string]map[string]string{
		"run":  {"state": filepath.Join(state, "acpmux", "state.db"), "token-file": filepath.Join(state, "acpmux", "token")},
		"demo": {"state": ":memory:", "token-file": filepath.Join(state, "acpmux", "token")},
	} {
		var out, errb bytes.Buffer
		if code := Main([]string{"config", "--config", writeConfig(t, ""), cmd}, stdio{strings.NewReader(""), &out, &errb}); code != 0 {
			t.Fatalf("config %s: status %d, stderr %q", cmd, code, errb.String())
		}
		for k, v := range want {
			line := k + ` = "` + v + `"`
			if !strings.Contains(out.String(), line) {
				t.Errorf("config %s: no line %q in\n%s", cmd, line, out.String())
			}
		}
	}
}
