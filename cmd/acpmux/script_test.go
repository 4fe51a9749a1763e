package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/acpmux/acpmux/internal/waitfile"
)

// TestScripts runs the CLI scripts in testdata/script/*.txtar with the
// acpmux under test on PATH, and the scripted fake agent as "fakeagent"
// (ACPTEST_AGENT_SCRIPT holds its script, see acptest.RunAgent). Each
// script's state and configuration directories are inside its work
// directory, so no script reads or writes a user's (testscript's HOME,
// /no-home, would otherwise hold the default state file, shared by every
// run). Daemon-like flows start "acpmux run" in the background (exec … &)
// with --log-file, and wait for its log lines with waitlog.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script", RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Values[waitlogRead{}] = map[string]int{}
			env.Values[ideFIFOs{}] = map[string]*os.File{}
			return nil
		},
		// [cpus2]: Go's default GOMAXPROCS here is more than one (it
		// follows the processors and a container's CPU quota).
		Condition: func(cond string) (bool, error) {
			if cond == "cpus2" {
				return runtime.GOMAXPROCS(0) >= 2, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitlog": cmdWaitLog,
			"httpget": cmdHTTPGet,
			"ide":     cmdIDE,
		},
	})
}

// cmdWaitLog is the script command
//
//	waitlog [-env NAME] FILE REGEXP [TIMEOUT]
//
// It waits until FILE (a log a background command appends to) has a line
// matching REGEXP (watching the file, see [waitfile.Until]), for TIMEOUT at the most (a time.ParseDuration string,
// default 10s), and fails the script otherwise. With -env it sets $NAME to
// the first parenthesised submatch. Later waits on the same FILE look only
// at lines after the last one matched, so a script can wait for the second
// occurrence of a line. With ! it waits the whole TIMEOUT and fails if a
// line matches.
func cmdWaitLog(ts *testscript.TestScript, neg bool, args []string) {
	var env string
	if len(args) > 1 && args[0] == "-env" {
		env, args = args[1], args[2:]
	}
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitlog [-env NAME] FILE REGEXP [TIMEOUT]")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	timeout := 10 * time.Second
	if len(args) == 3 {
		timeout, err = time.ParseDuration(args[2])
		ts.Check(err)
	}
	path := ts.MkAbs(args[0])
	read := ts.Value(waitlogRead{}).(map[string]int)
	n := read[path]
	seen := &n
	defer func() { read[path] = n }()
	var sub []string
	var matched string
	scan := func(data []byte) bool {
		if *seen > len(data) {
			*seen = 0 // the file was replaced
		}
		for {
			rest := data[*seen:]
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				return false // no line, or one still being written
			}
			line := string(rest[:i])
			*seen += i + 1
			if m := re.FindStringSubmatch(line); m != nil {
				sub, matched = m, line
				return true
			}
		}
	}
	data, err := waitfile.Until(path, timeout, scan)
	switch {
	case neg && err == nil:
		ts.Fatalf("%s: unexpected line %q", args[0], matched)
	case neg:
	case err != nil:
		ts.Fatalf("%s: no line matching %q after %v:\n%s", args[0], args[1], timeout, data)
	default:
		if env != "" && len(sub) > 1 {
			ts.Setenv(env, sub[1])
		}
		ts.Logf("%s: %s", args[0], matched)
	}
}

// waitlogRead is the [testscript.TestScript.Value] key of how far waitlog
// has read each file (bytes, by absolute path).
type waitlogRead struct{}

// cmdHTTPGet is the script command
//
//	httpget [-token FILE] URL
//
// It fetches URL (with the bearer token in FILE, when given) and writes
// the body to stdout, for stdout to check. A status other than 200 fails
// the script, or with ! is required.
func cmdHTTPGet(ts *testscript.TestScript, neg bool, args []string) {
	var token string
	if len(args) > 1 && args[0] == "-token" {
		token, args = strings.TrimSpace(ts.ReadFile(args[1])), args[2:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: httpget [-token FILE] URL")
	}
	req, err := http.NewRequest("GET", args[0], nil)
	ts.Check(err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "%s", body)
	if ok := resp.StatusCode == http.StatusOK; ok == neg {
		ts.Fatalf("GET %s: %s", args[0], resp.Status)
	}
}

// cmdIDE is the script command that plays the IDE's writing side:
//
//	ide open FIFO        make the named pipe FIFO and hold it open
//	ide send FIFO FILE   write FILE's lines (NDJSON messages) to it
//	ide write FIFO LINE  write LINE and a newline to it
//	ide close FIFO       close it: the IDE's end of input
//
// A background "sh -c 'exec acpmux run … <FIFO >OUT'" reads it as its
// stdin, which stays open between sends (testscript's stdin command gives
// a file's contents and then the end of input).
func cmdIDE(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: ide open|send|close FIFO [FILE]")
	}
	path := ts.MkAbs(args[1])
	open := ts.Value(ideFIFOs{}).(map[string]*os.File)
	switch {
	case args[0] == "open" && len(args) == 2:
		ts.Check(syscall.Mkfifo(path, 0o600))
		f, err := os.OpenFile(path, os.O_RDWR, 0) // O_RDWR: does not wait for the reader
		ts.Check(err)
		open[path] = f
		ts.Defer(func() { f.Close() })
	case args[0] == "send" && len(args) == 3:
		f := open[path]
		if f == nil {
			ts.Fatalf("ide send: %s is not open", args[1])
		}
		_, err := f.WriteString(ts.ReadFile(args[2]))
		ts.Check(err)
	case args[0] == "write" && len(args) == 3:
		f := open[path]
		if f == nil {
			ts.Fatalf("ide write: %s is not open", args[1])
		}
		_, err := f.WriteString(args[2] + "\n")
		ts.Check(err)
	case args[0] == "close" && len(args) == 2:
		if f := open[path]; f != nil {
			ts.Check(f.Close())
			delete(open, path)
		}
	default:
		ts.Fatalf("usage: ide open|send|close FIFO [FILE]")
	}
}

// ideFIFOs is the [testscript.TestScript.Value] key of the named pipes
// cmdIDE holds open, by absolute path.
type ideFIFOs struct{}
