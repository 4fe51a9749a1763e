package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

const token = "test-token-0123456789"

// server starts the API for b on a loopback port and returns its base URL.
func server(t *testing.T, b *confirm.Broker) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(b, httpapi.Options{Addr: ln.Addr().String(), Token: token, Version: "test",
		Logger: slog.New(slog.DiscardHandler)})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

func call(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	r, _ := http.NewRequest(method, url, rd)
	r.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: decode: %v", method, url, err)
	}
	return resp.StatusCode, m
}

func newBroker(t *testing.T) *confirm.Broker {
	t.Helper()
	s, err := sqlite.Open(sqlite.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b, err := confirm.NewBroker(confirm.Options{Store: s, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const reqParams = `{"sessionId":"sess_1","toolCall":{"toolCallId":"call_1","title":"Run make","kind":"execute","rawInput":{"command":"make"}},` +
	`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`

// slowIDE is a host that never answers; it records withdrawals.
type slowIDE struct {
	presented chan string
	mu        sync.Mutex
	withdrawn []confirm.Resolution
}

func (h *slowIDE) HostID() string { return "ide" }
func (h *slowIDE) Present(d *confirm.Decision) error {
	h.presented <- d.ID()
	return nil
}
func (h *slowIDE) Won(*confirm.Decision, confirm.Resolution) {}

func (h *slowIDE) Withdraw(d *confirm.Decision, res confirm.Resolution) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.withdrawn = append(h.withdrawn, res)
}

type asked struct {
	result json.RawMessage
	err    error
}

func open(b *confirm.Broker, key string, hosts ...confirm.Presenter) <-chan asked {
	ch := make(chan asked, 1)
	go func() {
		r, err := b.Ask(context.Background(), confirm.Request{SessionID: "sess_1", AgentKey: key, Params: json.RawMessage(reqParams), Cwd: "/repo"}, hosts)
		ch <- asked{r, err}
	}()
	return ch
}

func TestDecisionsAPI(t *testing.T) {
	b := newBroker(t)
	base := server(t, b)
	ide := &slowIDE{presented: make(chan string, 4)}
	ch := open(b, "e1/n1", ide, httpapi.Presenter{})
	id := <-ide.presented

	code, caps := call(t, "GET", base+"/v1/capabilities", "")
	if code != 200 || caps["decisions"] != true || caps["version"] != "test" {
		t.Fatalf("capabilities %d %v", code, caps)
	}
	code, ss := call(t, "GET", base+"/v1/sessions", "")
	sessions, _ := ss["sessions"].([]any)
	if code != 200 || len(sessions) != 1 {
		t.Fatalf("sessions %d %v", code, ss)
	}
	s0 := sessions[0].(map[string]any)
	if s0["sessionId"] != "sess_1" || s0["cwd"] != "/repo" || s0["openDecisions"] != 1.0 {
		t.Fatalf("session %v", s0)
	}
	code, list := call(t, "GET", base+"/v1/sessions/sess_1/decisions?status=open", "")
	ds, _ := list["decisions"].([]any)
	if code != 200 || len(ds) != 1 {
		t.Fatalf("list %d %v", code, list)
	}
	code, d := call(t, "GET", base+"/v1/sessions/sess_1/decisions/"+id, "")
	if code != 200 {
		t.Fatalf("get %d %v", code, d)
	}
	for _, f := range []string{"id", "sessionId", "status", "title", "toolCall", "command", "warnings", "options",
		"allowFreeText", "answer", "createdAt", "deadline", "events"} {
		if _, ok := d[f]; !ok {
			t.Errorf("decision lacks %q: %v", f, d)
		}
	}
	if d["status"] != "open" || d["answer"] != nil || d["command"] != "make" || d["title"] != "Run make" {
		t.Fatalf("decision %v", d)
	}

	// Invalid answers: 400, the decision stays open.
	for _, body := range []string{`{"optionId":"allow_always"}`, `{"optionId":"allow-once","text":"no free text"}`, `{}`} {
		if code, e := call(t, "POST", base+"/v1/sessions/sess_1/decisions/"+id, body); code != 400 {
			t.Fatalf("POST %s: %d %v", body, code, e)
		}
	}
	// The API answer beats the slow IDE.
	code, ans := call(t, "POST", base+"/v1/sessions/sess_1/decisions/"+id, `{"optionId":"allow-once"}`)
	if code != 200 || ans["status"] != "answered" || ans["deduped"] != false || ans["resolvedBy"] != "http" {
		t.Fatalf("answer %d %v", code, ans)
	}
	r := <-ch
	if r.err != nil || string(r.result) != `{"outcome":{"outcome":"selected","optionId":"allow-once"}}` {
		t.Fatalf("agent got %s %v", r.result, r.err)
	}
	ide.mu.Lock()
	if len(ide.withdrawn) != 1 || ide.withdrawn[0].By != "http" {
		t.Fatalf("ide withdrawals %+v", ide.withdrawn)
	}
	ide.mu.Unlock()
	// Same answer again: 200 deduped. A different one: 409 with the decision.
	code, ans = call(t, "POST", base+"/v1/sessions/sess_1/decisions/"+id, `{"optionId":"allow-once"}`)
	if code != 200 || ans["deduped"] != true {
		t.Fatalf("again %d %v", code, ans)
	}
	code, e := call(t, "POST", base+"/v1/sessions/sess_1/decisions/"+id, `{"optionId":"reject-once"}`)
	if code != 409 || e["error"].(map[string]any)["code"] != "conflict" || e["decision"].(map[string]any)["status"] != "answered" {
		t.Fatalf("conflict %d %v", code, e)
	}
	// Unknown ids and sessions: 404.
	for _, u := range []string{"/v1/sessions/sess_1/decisions/nope", "/v1/sessions/other/decisions/" + id, "/v1/sessions/other/decisions"} {
		if code, e := call(t, "GET", base+u, ""); code != 404 {
			t.Fatalf("GET %s: %d %v", u, code, e)
		}
	}
	if code, e := call(t, "GET", base+"/v1/sessions/sess_1/decisions/nope", ""); code != 404 || e["error"].(map[string]any)["message"] != "no decision nope in session sess_1" {
		t.Fatalf("GET unknown decision: %d %v, want the message \"no decision nope in session sess_1\"", code, e)
	}
	if code, _ := call(t, "POST", base+"/v1/sessions/other/decisions/"+id, `{"optionId":"allow-once"}`); code != 404 {
		t.Fatalf("POST other session: %d", code)
	}
	if code, _ := call(t, "GET", base+"/v1/sessions/sess_1/decisions?status=bogus", ""); code != 400 {
		t.Fatalf("bad status filter: %d", code)
	}
}

func TestCancelledDecisionConflicts(t *testing.T) {
	b := newBroker(t)
	base := server(t, b)
	ide := &slowIDE{presented: make(chan string, 1)}
	ch := open(b, "k", ide)
	id := <-ide.presented
	b.CancelSession("sess_1", "session/cancel")
	<-ch
	code, e := call(t, "POST", base+"/v1/sessions/sess_1/decisions/"+id, `{"optionId":"allow-once"}`)
	if code != 409 || e["decision"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("%d %v", code, e)
	}
}

// Two API clients POST different answers at the same instant: one 200, one 409.
func TestConcurrentPOSTs(t *testing.T) {
	b := newBroker(t)
	base := server(t, b)
	for i := range 100 {
		ide := &slowIDE{presented: make(chan string, 1)}
		ch := open(b, fmt.Sprint("k", i), ide, httpapi.Presenter{})
		id := <-ide.presented
		codes := make([]int, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for j, opt := range []string{"allow-once", "reject-once"} {
			wg.Go(func() {
				<-start
				codes[j], _ = call(t, "POST", base+"/v1/sessions/sess_1/decisions/"+id, `{"optionId":"`+opt+`"}`)
			})
		}
		close(start)
		wg.Wait()
		r := <-ch
		switch {
		case codes[0] == 200 && codes[1] == 409:
			if !bytes.Contains(r.result, []byte(`"allow-once"`)) {
				t.Fatalf("trial %d: agent got %s", i, r.result)
			}
		case codes[0] == 409 && codes[1] == 200:
			if !bytes.Contains(r.result, []byte(`"reject-once"`)) {
				t.Fatalf("trial %d: agent got %s", i, r.result)
			}
		default:
			t.Fatalf("trial %d: codes %v", i, codes)
		}
	}
}

func TestNoBroker(t *testing.T) {
	base := server(t, nil)
	code, caps := call(t, "GET", base+"/v1/capabilities", "")
	if code != 200 || caps["decisions"] != false {
		t.Fatalf("%d %v", code, caps)
	}
	for _, u := range []string{"/v1/sessions", "/v1/sessions/s/decisions", "/v1/sessions/s/decisions/d"} {
		if code, _ := call(t, "GET", base+u, ""); code != 503 {
			t.Fatalf("GET %s: %d", u, code)
		}
	}
	if code, _ := call(t, "POST", base+"/v1/sessions/s/decisions/d", `{"optionId":"a"}`); code != 503 {
		t.Fatalf("POST: %d", code)
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "token")
	tok, err := httpapi.LoadOrCreateToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok) {
		t.Fatalf("token %q is not 256-bit hex", tok)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v err %v", fi.Mode(), err)
	}
	again, err := httpapi.LoadOrCreateToken(path)
	if err != nil || again != tok {
		t.Fatalf("second load %q %v", again, err)
	}
	mine := filepath.Join(dir, "mine")
	os.WriteFile(mine, []byte("  my-token\n"), 0o600)
	if got, _ := httpapi.LoadOrCreateToken(mine); got != "my-token" {
		t.Fatalf("existing token read as %q", got)
	}
	blank := filepath.Join(dir, "blank")
	os.WriteFile(blank, []byte(" \n"), 0o644)
	got, err := httpapi.LoadOrCreateToken(blank)
	if err != nil || len(got) != 64 {
		t.Fatalf("blank file: %q %v", got, err)
	}
	if fi, _ := os.Stat(blank); fi.Mode().Perm() != 0o600 {
		t.Fatalf("blank file mode %v", fi.Mode())
	}
}

func TestCheckListenAddr(t *testing.T) {
	tests := []struct {
		addr         string
		allow        bool
		remote, fail bool
	}{
		{"127.0.0.1:7777", false, false, false},
		{"localhost:7777", false, false, false},
		{"[::1]:7777", false, false, false},
		{"127.0.0.2:0", false, false, false},
		{":7777", false, true, true},
		{"0.0.0.0:7777", false, true, true},
		{"192.168.1.5:7777", false, true, true},
		{"0.0.0.0:7777", true, true, false},
		{"127.0.0.1", false, false, true},
	}
	for _, tt := range tests {
		remote, err := httpapi.CheckListenAddr(tt.addr, tt.allow)
		if remote != tt.remote || (err != nil) != tt.fail {
			t.Errorf("CheckListenAddr(%q, %v) = %v, %v", tt.addr, tt.allow, remote, err)
		}
	}
}

func TestPresenter(t *testing.T) {
	var p confirm.Presenter = httpapi.Presenter{}
	if p.HostID() != httpapi.DefaultHostID || p.Present(nil) != nil {
		t.Fatal("presenter")
	}
}
