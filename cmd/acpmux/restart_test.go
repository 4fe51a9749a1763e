package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/acp/acptest"
)

// runningRelay is "acpmux run --listen" started as a subprocess with the
// fake agent, the test playing the IDE on its stdin and stdout.
type runningRelay struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	apiURL string
	token  string
	// logLines receives acpmux's stderr lines after the listen line
	// (dropped when nobody reads and the buffer is full).
	logLines chan string
}

// waitLog returns the first later log line that contains want, failing
// the test after 10s.
func (r *runningRelay) waitLog(t *testing.T, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l := <-r.logLines:
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("acpmux logged no line with %q", want)
			return ""
		}
	}
}

var listenRe = regexp.MustCompile(`decisions API listening.*url=http://([^/ ]+)`)

func startRelayProcess(t *testing.T, script string, flags ...string) *runningRelay {
	t.Helper()
	return startRelayProcessEnv(t, script, nil, flags...)
}

// startRelayProcessEnv is startRelayProcess with more environment for the
// agent (acpmux passes its environment on).
func startRelayProcessEnv(t *testing.T, script string, env []string, flags ...string) *runningRelay {
	t.Helper()
	return startRelayProcessWrapped(t, nil, script, env, flags...)
}

// startRelayProcessWrapped is startRelayProcessEnv with acpmux started
// through the command wrap (such as sh -c 'ulimit ...; exec "$@"').
func startRelayProcessWrapped(t *testing.T, wrap []string, script string, env []string, flags ...string) *runningRelay {
	t.Helper()
	return startRelayAgent(t, wrap, []string{os.Args[0]}, append([]string{acptest.EnvScript + "=" + script}, env...), flags...)
}

// startRelayAgent is startRelayProcessWrapped with the agent argv instead
// of the scripted agent.
func startRelayAgent(t *testing.T, wrap, agent []string, env []string, flags ...string) *runningRelay {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	args := append([]string{"run", "--listen", "127.0.0.1:0", "--token-file", tokenFile}, flags...)
	args = append(append(append([]string{}, wrap...), "acpmux"), append(append(args, "--"), agent...)...)
	if i := slices.Index(flags, "--token-file"); i >= 0 && i+1 < len(flags) {
		tokenFile = flags[i+1] // a later flag wins
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := &runningRelay{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	r.out.Buffer(make([]byte, 1<<20), 1<<26)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := listenRe.FindStringSubmatch(sc.Text()); m != nil {
			r.apiURL = "http://" + m[1]
			break
		}
	}
	r.logLines = make(chan string, 256)
	go func() {
		for sc.Scan() {
			select {
			case r.logLines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	if r.apiURL == "" {
		t.Fatal("acpmux did not print the decisions API address")
	}
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	r.token = strings.TrimSpace(string(tok))
	return r
}

func (r *runningRelay) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// waitFor reads the IDE side until a message with method (or, when method
// is "", a response) arrives.
func (r *runningRelay) waitFor(t *testing.T, method string) map[string]any {
	t.Helper()
	for r.out.Scan() {
		var m map[string]any
		json.Unmarshal(r.out.Bytes(), &m)
		if m["method"] == method || (method == "" && m["method"] == nil) {
			return m
		}
	}
	t.Fatalf("stdout closed waiting for %q", method)
	return nil
}

func (r *runningRelay) get(t *testing.T, path string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", r.apiURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(v)
	return resp.StatusCode
}

const permAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
waiteof
`

// TestDecisionsCLIAcceptsThePageLink: the approvals page link that
// acpmux run --listen prints (http://HOST:PORT/?token=…) works as
// --url: its token is used, without a token file.
func TestDecisionsCLIAcceptsThePageLink(t *testing.T) {
	r := startRelayProcess(t, permAgentScript, "--state", ":memory:")
	link := r.apiURL + "/?token=" + r.token
	out, err := exec.Command("acpmux", "decisions", "list", "--url", link, "--token-file", filepath.Join(t.TempDir(), "none")).CombinedOutput()
	if err != nil {
		t.Fatalf("decisions list --url PAGE-LINK: %v\n%s", err, out)
	}
	out, err = exec.Command("acpmux", "decisions", "list", "--url", r.apiURL+"/?token=wrong").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "401") {
		t.Fatalf("a wrong token in the link: %v %s, want a 401 error", err, out)
	}
}
