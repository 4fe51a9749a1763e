package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpmux/acpmux/bridge/httpapi"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// people are the tokens peopleServer adds: name → token, of the form
// acpmux token add issues (personToken).
var people = map[string]string{"alice": personToken("alice"), "bob": personToken("bob"), "dave": personToken("dave"),
	"olga": personToken("olga"), "rex": personToken("rex"), "eve": personToken("eve")}

// personToken returns a token for name of the form acpmux token add
// issues: 64 lowercase hex digits.
func personToken(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// peopleServer serves a broker whose policy needs two of alice, bob and
// dave (dave's role is observer) for "make", with tokens: alice, bob
// (approvers), dave, olga (observers), rex (revoked), eve (expired).
func peopleServer(t *testing.T) (string, *confirm.Broker) {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	now := time.Now()
	add := func(name string, role store.Role, expires time.Time) {
		if err := s.AddToken(t.Context(), store.Token{Name: name, Role: role, SHA256: store.TokenSHA256(people[name]), CreatedAt: now, ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
	}
	add("alice", store.RoleApprover, time.Time{})
	add("bob", store.RoleApprover, now.Add(time.Hour))
	add("dave", store.RoleObserver, time.Time{})
	add("olga", store.RoleObserver, time.Time{})
	add("rex", store.RoleAdmin, time.Time{})
	add("eve", store.RoleAdmin, now.Add(-time.Second))
	if err := s.RevokeToken(t.Context(), "rex", now); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse([]byte("[[rule]]\nname='two'\ndecision='ask'\ncommand='make*'\napprovers=['alice','bob','dave']\nquorum=2"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := confirm.NewBroker(confirm.Options{Store: s, Policy: pol, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(b, httpapi.Options{Addr: ln.Addr().String(), Token: token, People: s,
		Logger: slog.New(slog.DiscardHandler)})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), b
}

func callAs(t *testing.T, tok, method, url, body string) (int, map[string]any) {
	t.Helper()
	r, _ := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// TestTokensAuthenticatePeople: each token authenticates its person
// (GET /v1/capabilities says who), the --token-file token is the admin
// "token-file", and an unknown, revoked, expired or missing token is 401
// with a code that says which; a malformed one (not "Bearer TOKEN", or a
// token that is neither the --token-file token nor 64 lowercase hex digits)
// is unauthorized like a missing one, not unknown_token; the page's
// ?token= exchange refuses the same way.
func TestTokensAuthenticatePeople(t *testing.T) {
	base, _ := peopleServer(t)
	for _, tc := range []struct {
		tok        string
		status     int
		code, name string
		role       store.Role
	}{
		{token, 200, "", httpapi.LegacyPerson, store.RoleAdmin},
		{people["alice"], 200, "", "alice", store.RoleApprover},
		{people["olga"], 200, "", "olga", store.RoleObserver},
		{personToken("nobody"), 401, "unknown_token", "", ""},
		{"00", 401, "unauthorized", "", ""},                                  // malformed: not 64 hex digits
		{strings.ToUpper(personToken("alice")), 401, "unauthorized", "", ""}, // malformed: upper case
		{people["alice"] + "0", 401, "unauthorized", "", ""},
		{people["rex"], 401, "token_revoked", "", ""},
		{people["eve"], 401, "token_expired", "", ""},
		{"", 401, "unauthorized", "", ""},
	} {
		code, m := callAs(t, tc.tok, "GET", base+"/v1/capabilities", "")
		p, _ := m["person"].(map[string]any)
		if code != tc.status || errCode(m) != tc.code || (tc.name != "" && (p["name"] != tc.name || p["role"] != string(tc.role))) {
			t.Errorf("token %q: %d %v, want %d %q %s/%s", tc.tok, code, m, tc.status, tc.code, tc.name, tc.role)
		}
	}
	for _, h := range []string{"Basic " + people["alice"], "Bearer", "Bearer" + people["alice"], "Bearer 00"} {
		r, _ := http.NewRequest("GET", base+"/v1/capabilities", nil)
		r.Header.Set("Authorization", h)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != 401 || errCode(m) != "unauthorized" {
			t.Errorf("Authorization %q: %d %v, want 401 unauthorized (malformed, as a missing token)", h, resp.StatusCode, m)
		}
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for tok, want := range map[string]int{people["rex"]: 401, people["eve"]: 401, people["olga"]: 303} {
		resp, err := noRedirect.Get(base + "/?token=" + tok)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("page exchange of %s: %d, want %d", tok, resp.StatusCode, want)
		}
	}
}

// TestRolesAndQuorumThroughAPI: an observer and a non-approver get 403,
// an approver's allow is a vote (202, still open), the same person again
// is 409 duplicate_vote, a body that names a person is 400 (the person
// comes from the token only), a second approver completes the quorum
// (200, answeredBy), and the agent gets one answer. Every refusal is in
// the journal with the person, and none was counted.
func TestRolesAndQuorumThroughAPI(t *testing.T) {
	base, b := peopleServer(t)
	ide := &slowIDE{presented: make(chan string, 1)}
	ch := open(b, "k1", ide)
	id := <-ide.presented
	url := base + "/v1/sessions/sess_1/decisions/" + id
	allow := `{"optionId":"allow-once"}`
	for _, step := range []struct {
		who, body string
		status    int
		code      string
	}{
		{"olga", allow, 403, "forbidden"},
		{"dave", allow, 403, "forbidden"}, // an approver of the rule, but an observer
		{"alice", allow, 202, ""},
		{"alice", allow, 409, "duplicate_vote"},
		{"alice", `{"optionId":"allow-once","person":"bob"}`, 400, "invalid_body"},
		{"bob", allow, 200, ""},
	} {
		code, m := callAs(t, people[step.who], "POST", url, step.body)
		if code != step.status || errCode(m) != step.code {
			t.Fatalf("%s posts %s: %d %v, want %d %q", step.who, step.body, code, m, step.status, step.code)
		}
		if code == 200 && m["answeredBy"] != "bob" {
			t.Fatalf("answeredBy %v, want bob", m["answeredBy"])
		}
	}
	if r := <-ch; r.err != nil || string(r.result) != `{"outcome":{"outcome":"selected","optionId":"allow-once"}}` {
		t.Fatalf("agent got %s %v", r.result, r.err)
	}
	v, err := b.Decision(t.Context(), "sess_1", id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range v.Events {
		if ev.Person != "" {
			got = append(got, string(ev.Type)+":"+ev.Person)
		}
	}
	want := "[invalid_answer:olga invalid_answer:dave vote:alice invalid_answer:alice vote:bob answered:bob]"
	if s := fmt.Sprint(got); s != want {
		t.Fatalf("journal\n got %s\nwant %s", s, want)
	}
}
