package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/acpmux/acpmux/acp/acptest"
	"github.com/acpmux/acpmux/internal/waitfile"
	"github.com/acpmux/acpmux/streamjson"
)

var updateSJ = flag.Bool("update-stream-json", false, "rewrite the want section of testdata/streamjson/*.txtar")

// sjRun is "acpmux stream-json" started as a subprocess with the scripted
// fake agent; the test is the script on its stdin and stdout.
type sjRun struct {
	t        *testing.T
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out      chan []byte // stdout lines, closed at EOF
	errMu    sync.Mutex
	errLines []string
	errNew   chan struct{}
	agentLog string
	base     string // http://ADDR of --listen
	token    string

	got     []string          // what the script read, normalized, and checks
	reqs    map[string]string // can_use_tool request_id → R1, R2, …
	lastReq string
	exited  bool
	code    int
}

const sjToken = "stream-json-test-token"

// startSJ starts "acpmux stream-json --state :memory: FLAGS -- fake-agent".
// A flag "LISTEN" becomes --listen on a free port with a fixed token.
func startSJ(t *testing.T, script string, flags []string, env ...string) *sjRun {
	t.Helper()
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "agent.script")
	os.WriteFile(scriptFile, []byte(script), 0o600)
	r := &sjRun{t: t, agentLog: filepath.Join(dir, "agent.log"), out: make(chan []byte, 4096), errNew: make(chan struct{}, 1),
		reqs: map[string]string{}, token: sjToken}
	args := []string{"stream-json", "--state", ":memory:", "--grace", "500ms"}
	for _, f := range flags {
		if f == "LISTEN" {
			tokenFile := filepath.Join(dir, "token")
			os.WriteFile(tokenFile, []byte(sjToken), 0o600)
			addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
			r.base = "http://" + addr
			args = append(args, "--listen", addr, "--token-file", tokenFile)
			continue
		}
		args = append(args, f)
	}
	self, _ := filepath.Abs(os.Args[0])
	args = append(args, "--", self)
	r.cmd = exec.Command("acpmux", args...)
	r.cmd.Dir = dir
	r.cmd.Env = append(append(os.Environ(), acptest.EnvScript+"=@"+scriptFile, acptest.EnvLog+"="+r.agentLog), env...)
	r.cmd.WaitDelay = 5 * time.Second
	r.stdin, _ = r.cmd.StdinPipe()
	stdout, _ := r.cmd.StdoutPipe()
	stderr, _ := r.cmd.StderrPipe()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.out)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			r.out <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.errMu.Lock()
			r.errLines = append(r.errLines, sc.Text())
			r.errMu.Unlock()
			select {
			case r.errNew <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		if !r.exited {
			r.stdin.Close()
			for range r.out {
			}
			r.cmd.Wait()
		}
		if t.Failed() {
			r.errMu.Lock()
			t.Logf("acpmux stderr:\n%s", strings.Join(r.errLines, "\n"))
			r.errMu.Unlock()
		}
	})
	return r
}

// record normalizes and records one stdout line, and notes can_use_tool
// request ids.
func (r *sjRun) record(line []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		r.t.Fatalf("stdout line is not a JSON object: %q", line)
	}
	if m["type"] == "control_request" {
		if req, _ := m["request"].(map[string]any); req["subtype"] == "can_use_tool" || req["subtype"] == "elicitation" {
			id, _ := m["request_id"].(string)
			if _, ok := r.reqs[id]; !ok {
				r.reqs[id] = "R" + strconv.Itoa(len(r.reqs)+1)
			}
			r.lastReq = id
		}
	}
	b, _ := json.Marshal(r.normalize(m))
	r.got = append(r.got, "sj "+string(b))
	return m
}

// normalize replaces what differs between runs: uuids, message ids,
// durations, the version, the working directory and can_use_tool ids.
func (r *sjRun) normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch s, _ := x.(string); {
			case k == "uuid" || k == "claude_code_version" || k == "qwen_code_version" || k == "cwd":
				v[k] = "*"
			case k == "duration_ms" || k == "duration_api_ms":
				v[k] = 0
			case k == "id" && strings.HasPrefix(s, "msg_"):
				v[k] = "msg_*"
			case k == "request_id" && r.reqs[s] != "":
				v[k] = r.reqs[s]
			default:
				v[k] = r.normalize(x)
			}
		}
	case []any:
		for i := range v {
			v[i] = r.normalize(v[i])
		}
	}
	return v
}

func (r *sjRun) next() ([]byte, bool) {
	select {
	case line, ok := <-r.out:
		return line, ok
	case <-time.After(20 * time.Second):
		r.t.Fatalf("no stdout line for 20s; got so far:\n%s", strings.Join(r.got, "\n"))
	}
	return nil, false
}

// step runs one line of a steps section.
func (r *sjRun) step(line string) {
	t := r.t
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.ReplaceAll(arg, "$REQ", r.lastReq)
	switch verb {
	case "send":
		if _, err := io.WriteString(r.stdin, arg+"\n"); err != nil {
			t.Fatal(err)
		}
	case "wait": // TYPE or TYPE/SUBTYPE (a control_request's request subtype)
		typ, sub, _ := strings.Cut(arg, "/")
		for {
			line, ok := r.next()
			if !ok {
				t.Fatalf("stdout ended waiting for %s; got:\n%s", arg, strings.Join(r.got, "\n"))
			}
			m := r.record(line)
			s, _ := m["subtype"].(string)
			if req, ok := m["request"].(map[string]any); ok {
				s, _ = req["subtype"].(string)
			}
			if m["type"] == typ && (sub == "" || s == sub) {
				return
			}
		}
	case "close":
		r.stdin.Close()
		for {
			line, ok := r.next()
			if !ok {
				break
			}
			r.record(line)
		}
		err := r.cmd.Wait()
		r.exited = true
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		r.got = append(r.got, "exit "+strconv.Itoa(r.code))
	case "answer": // OPTIONID: answer $REQ (a decision id) through the HTTP API
		body := `{"optionId":` + strconv.Quote(arg) + `}`
		req, _ := http.NewRequest("POST", r.base+"/v1/sessions/s1/decisions/"+r.lastReq, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+r.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		r.got = append(r.got, "http "+strconv.Itoa(resp.StatusCode))
	case "stderr": // wait for a stderr line containing arg
		deadline := time.After(20 * time.Second)
		for {
			r.errMu.Lock()
			found := false
			for _, l := range r.errLines {
				found = found || strings.Contains(l, arg)
			}
			r.errMu.Unlock()
			if found {
				r.got = append(r.got, "stderr "+arg)
				return
			}
			select {
			case <-r.errNew:
			case <-deadline:
				t.Fatalf("acpmux logged no %q", arg)
			}
		}
	case "answerq": // BODY: answer question $REQ through the HTTP API with BODY
		req, _ := http.NewRequest("POST", r.base+"/v1/sessions/s1/decisions/"+r.lastReq, strings.NewReader(arg))
		req.Header.Set("Authorization", "Bearer "+r.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error struct{ Field string } `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		r.got = append(r.got, strings.TrimSpace("http "+strconv.Itoa(resp.StatusCode)+" "+body.Error.Field))
	case "agentjson": // ID: record the whole result the agent read for its request ID
		b, _ := json.Marshal(r.agentResult(arg))
		r.got = append(r.got, fmt.Sprintf("agent %s %s", arg, b))
	case "agent": // ID: record the outcome the agent read for its request ID
		res := r.agentResult(arg)
		option, by := outcomeOf(res)
		r.got = append(r.got, fmt.Sprintf("agent %s %s %s", arg, option, by))
	default:
		t.Fatalf("unknown step %q", line)
	}
}

// agentResult returns the result the agent read for its request id (a
// JSON string), waiting for the agent to read it.
func (r *sjRun) agentResult(id string) map[string]any {
	var res map[string]any
	read := func(b []byte) bool {
		for _, line := range strings.Split(string(b), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["id"] == id && m["method"] == nil {
				res, _ = m["result"].(map[string]any)
				return true
			}
		}
		return false
	}
	if _, err := waitfile.Until(r.agentLog, 20*time.Second, read); err != nil {
		r.t.Fatalf("the agent read no response to %s", id)
	}
	return res
}

// TestStreamJSONSessions replays testdata/streamjson/*.txtar through the
// real binary: "flags" (one a line), "agent" (an acptest agent script),
// "steps" (send, wait, answer, stderr, agent, close) and "want": every
// line the script read, normalized (uuids, message ids, durations,
// can_use_tool ids R1, R2, …) and compared as JSON values, with the
// checks' lines. Run with -update-stream-json to rewrite the want sections.
func TestStreamJSONSessions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "streamjson", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no sessions")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sec := map[string]string{}
			for _, f := range ar.Files {
				sec[f.Name] = string(f.Data)
			}
			var flags []string
			for _, l := range strings.Split(sec["flags"], "\n") {
				if l = strings.TrimSpace(l); l != "" {
					flags = append(flags, l)
				}
			}
			r := startSJ(t, sec["agent"], flags)
			for _, l := range strings.Split(sec["steps"], "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					r.step(l)
				}
			}
			if *updateSJ {
				for i := range ar.Files {
					if ar.Files[i].Name == "want" {
						ar.Files[i].Data = []byte(strings.Join(r.got, "\n") + "\n")
					}
				}
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := strings.Split(strings.TrimSpace(sec["want"]), "\n")
			for i := range max(len(r.got), len(want)) {
				var g, w string
				if i < len(r.got) {
					g = r.got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				gs, gj, _ := strings.Cut(g, " ")
				ws, wj, _ := strings.Cut(w, " ")
				if gs != ws || (gs == "sj" && !streamjson.JSONEqual([]byte(gj), []byte(wj))) || (gs != "sj" && gj != wj) {
					t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
				}
			}
		})
	}
}
