package confirm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// fakeHost is a scripted Presenter. onPresent, when set, runs in its own
// goroutine (Present must not block or call back synchronously); the test
// waits for those goroutines through wg.
type fakeHost struct {
	id         string
	presentErr error
	onPresent  func(h *fakeHost, d *confirm.Decision)

	presented chan *confirm.Decision
	wg        sync.WaitGroup

	mu        sync.Mutex // guards withdrawn
	withdrawn []confirm.Resolution
}

func newHost(id string) *fakeHost {
	return &fakeHost{id: id, presented: make(chan *confirm.Decision, 64)}
}

func (h *fakeHost) HostID() string { return h.id }

func (h *fakeHost) Present(d *confirm.Decision) error {
	if h.presentErr != nil {
		return h.presentErr
	}
	h.presented <- d
	if h.onPresent != nil {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.onPresent(h, d)
		}()
	}
	return nil
}

func (h *fakeHost) Withdraw(d *confirm.Decision, res confirm.Resolution) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.withdrawn = append(h.withdrawn, res)
}

func (h *fakeHost) Won(*confirm.Decision, confirm.Resolution) {}

func (h *fakeHost) withdrawals() []confirm.Resolution {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]confirm.Resolution(nil), h.withdrawn...)
}

// turnCanceller is a [confirm.Sessions] whose sessions are all alive and
// whose CancelTurn calls the function.
type turnCanceller func(sid, reason string)

func (turnCanceller) SessionAlive(string) bool        { return true }
func (f turnCanceller) CancelTurn(sid, reason string) { f(sid, reason) }

// wait returns the next decision presented to h, failing the test after 10s.
func (h *fakeHost) wait(t testing.TB) *confirm.Decision {
	t.Helper()
	select {
	case d := <-h.presented:
		return d
	case <-time.After(10 * time.Second):
		t.Fatalf("host %s: nothing presented", h.id)
		return nil
	}
}

// answerAfter returns an onPresent that sends result (an ACP result) after delay.
func answerAfter(b *confirm.Broker, delay time.Duration, result string) func(*fakeHost, *confirm.Decision) {
	return func(h *fakeHost, d *confirm.Decision) {
		time.Sleep(delay)
		_ = b.AnswerResult(context.Background(), d.ID(), h.id, json.RawMessage(result))
	}
}

// params builds session/request_permission params with options given as
// "optionId:kind".
func params(sid string, opts ...string) json.RawMessage {
	var os []string
	for _, o := range opts {
		id, kind, _ := strings.Cut(o, ":")
		os = append(os, fmt.Sprintf(`{"optionId":%q,"name":%q,"kind":%q}`, id, "Option "+id, kind))
	}
	return json.RawMessage(fmt.Sprintf(`{"sessionId":%q,"toolCall":{"toolCallId":"call_1","title":"Run ls","kind":"execute","rawInput":{"command":"ls -la"}},"options":[%s]}`,
		sid, strings.Join(os, ",")))
}

// standard is the usual offer: allow once, reject once.
var standard = []string{"allow-once:allow_once", "reject-once:reject_once"}

func selected(id string) string {
	return fmt.Sprintf(`{"outcome":{"outcome":"selected","optionId":%q}}`, id)
}

const cancelledResult = `{"outcome":{"outcome":"cancelled"}}`

func newBroker(t testing.TB, opts confirm.Options) *confirm.Broker {
	t.Helper()
	if opts.Logger == nil && !testing.Verbose() {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := confirm.NewBroker(opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func memStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(sqlite.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fileStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.TempDir() + "/state.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type askResult struct {
	result json.RawMessage
	err    error
}

// ask runs Ask in a goroutine and returns the channel of its outcome.
func ask(b *confirm.Broker, req confirm.Request, hosts ...confirm.Presenter) <-chan askResult {
	ch := make(chan askResult, 1)
	go func() {
		r, err := b.Ask(context.Background(), req, hosts)
		ch <- askResult{r, err}
	}()
	return ch
}

func await(t testing.TB, ch <-chan askResult) askResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Ask did not return")
		return askResult{}
	}
}

func req(sid, key string, opts ...string) confirm.Request {
	if len(opts) == 0 {
		opts = standard
	}
	return confirm.Request{SessionID: sid, AgentKey: key, Params: params(sid, opts...), Cwd: "/work"}
}

// eventTypes returns "type@host" for each journal event.
func eventTypes(v confirm.View) []string {
	var out []string
	for _, e := range v.Events {
		s := string(e.Type)
		if e.Host != "" {
			s += "@" + e.Host
		}
		out = append(out, s)
	}
	return out
}

func count(evs []string, want string) int {
	n := 0
	for _, e := range evs {
		if e == want {
			n++
		}
	}
	return n
}

func jsonEq(t testing.TB, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %s: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("got %s, want %s", gb, wb)
	}
}
