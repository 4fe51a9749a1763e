package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// quietStderr matches what a quiet exit must not print: a command's error
// line, a log line above info, or a library's note on the standard logger
// (jsonrpc2's "ignoring response #2 with no corresponding request").
var quietStderr = regexp.MustCompile(`(?m)^acpmux \w+:|level=(WARN|ERROR)|jsonrpc2:`)

// readUntil reads r until what it read contains want.
func readUntil(t *testing.T, r io.Reader, want string) {
	t.Helper()
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(got, []byte(want)) {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("output ended before %q: %v\n%s", want, err, got)
		}
	}
}

// TestDemoCtrlCExits130: Ctrl-C (SIGINT) while the demo waits for a choice
// ends it with status 130, no error text, and one calm line after the
// prompt saying the request was cancelled. The response to the prompt
// turn the host gave up races the exit, so it is tried a few times.
func TestDemoCtrlCExits130(t *testing.T) {
	for range 4 {
		demoCtrlC(t)
	}
}

func demoCtrlC(t *testing.T) {
	cmd := exec.Command("acpmux", "demo")
	in, _ := cmd.StdinPipe() // held open: the demo waits for a number
	defer in.Close()
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	readUntil(t, out, "Choose 1-3:")
	cmd.Process.Signal(syscall.SIGINT)
	rest, _ := io.ReadAll(out)
	cmd.Wait()
	if lines := strings.Split(strings.TrimRight(string(rest), "\n"), "\n"); len(lines) > 2 || strings.Contains(string(rest), "withdrawn") ||
		(len(lines) == 2 && !strings.HasPrefix(lines[1], "  (cancelled before an answer")) {
		t.Errorf("after Ctrl-C the demo printed %q, want at most one line saying the request was cancelled", rest)
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit status %d, want 130", code)
	}
	if m := quietStderr.FindString(stderr.String()); m != "" {
		t.Errorf("stderr has %q after Ctrl-C:\n%s", m, stderr.String())
	}
}

// TestAttachSIGTERMExitsQuietly: SIGTERM to "acpmux attach" (an IDE
// stopping its agent) ends it with status 143 and no error text.
func TestAttachSIGTERMExitsQuietly(t *testing.T) {
	r := startRelayProcess(t, permAgentScript, "--state", ":memory:")
	tokenFile := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(tokenFile, []byte(r.token), 0o600)
	cmd := exec.Command("acpmux", "attach", "--token-file", tokenFile, r.apiURL)
	in, _ := cmd.StdinPipe()
	defer in.Close()
	outPipe, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	io.WriteString(in, `{"jsonrpc":"2.0","id":"a1","method":"initialize","params":{"protocolVersion":1}}`+"\n")
	out := bufio.NewScanner(outPipe)
	if !out.Scan() || !strings.Contains(out.Text(), `"a1"`) {
		t.Fatalf("no initialize response through attach: %q", out.Text())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit status %d, want 143", code)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr after SIGTERM: %q, want nothing", stderr.String())
	}
	// The relay saw the normal close handshake, not a dropped connection.
	if l := r.waitLog(t, `msg="host left"`); !strings.Contains(l, `cause="host closed the connection"`) {
		t.Errorf("the relay logged %q, want cause=\"host closed the connection\"", l)
	}
}
