package confirm_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm/gate"

	"github.com/acpmux/acpmux/classify"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/policy"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

func classifyCmd(cmd string) confirm.Classification {
	v := classify.Command(cmd)
	return confirm.Classification{Class: v.Class.String(), Diverges: v.Diverges}
}

// toolReq is a permission request for a tool call of kind with rawInput
// command (none when ""), offering allow-once, allow-always and reject-once.
func toolReq(sid, key, kind, command string) confirm.Request {
	raw := "{}"
	title := "Read README.md"
	if command != "" {
		c, _ := json.Marshal(command)
		raw, title = `{"command":`+string(c)+`}`, command
	}
	t, _ := json.Marshal(title)
	p := fmt.Sprintf(`{"sessionId":%q,"toolCall":{"toolCallId":%q,"title":%s,"kind":%q,"rawInput":%s,"locations":[{"path":"/work/README.md"}]},"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"allow-always","name":"Always","kind":"allow_always"},{"optionId":"reject-once","name":"No","kind":"reject_once"}]}`,
		sid, "call_"+key, t, kind, raw)
	return confirm.Request{SessionID: sid, AgentKey: key, Params: json.RawMessage(p), Cwd: "/work"}
}

// outcome decodes an agent result into its optionId ("cancelled" for that
// outcome) and _meta.acpmux.message.
func outcome(t *testing.T, raw json.RawMessage) (string, string) {
	t.Helper()
	var r struct {
		Outcome struct{ Outcome, OptionID string }
		Meta    struct{ Acpmux struct{ Message string } } `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	if r.Outcome.Outcome == "cancelled" {
		return "cancelled", r.Meta.Acpmux.Message
	}
	return r.Outcome.OptionID, r.Meta.Acpmux.Message
}

func mustPolicy(t *testing.T, src string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// planItem returns the audit row of decision id.
func planItem(t *testing.T, b *confirm.Broker, sid, id string) gate.PlanItem {
	t.Helper()
	items, err := b.PlanItems(context.Background(), sid, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("no plan item %s among %d", id, len(items))
	return gate.PlanItem{}
}

func TestPolicyThroughBroker(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Policy: mustPolicy(t, `
[[rule]]
name = "no-rm"
decision = "deny"
command = "rm *"
[[rule]]
name = "ok-make"
decision = "allow"
command = "make*"
class = ["unknown"]
[[rule]]
name = "git-status"
decision = "allow"
command = "git status*"
`)})
	ide := newHost("ide")
	r := await(t, ask(b, toolReq("s", "1", "execute", "rm -rf build"), ide))
	if opt, msg := outcome(t, r.result); opt != "reject-once" || msg != gate.PolicyDenyMessage {
		t.Errorf("rm: %s %q", opt, msg)
	}
	r = await(t, ask(b, toolReq("s", "2", "execute", "make test"), ide))
	if opt, _ := outcome(t, r.result); opt != "allow-once" {
		t.Errorf("make: %s", opt)
	}
	r = await(t, ask(b, toolReq("s", "2b", "execute", "git status"), ide))
	if opt, _ := outcome(t, r.result); opt != "allow-once" {
		t.Errorf("git status: %s", opt)
	}
	// The glob also matches a chained write, but an allow rule without a
	// class matcher never approves a write or unknown command.
	chained := ask(b, toolReq("s", "2c", "execute", "git status; touch pwned"), ide)
	if d := ide.wait(t); len(d.Options()) != 3 {
		t.Errorf("chained write: %d options shown, want the agent's prompt", len(d.Options()))
	} else {
		b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "reject-once"})
	}
	if opt, _ := outcome(t, await(t, chained).result); opt != "reject-once" {
		t.Errorf("chained write: %s, want the host's reject", opt)
	}
	ch := ask(b, toolReq("s", "3", "execute", "ls"), ide)
	d := ide.wait(t)
	if len(d.Options()) != 3 {
		t.Errorf("default-mode prompt offers %d options, want the agent's 3", len(d.Options()))
	}
	b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(selected("allow-once")))
	await(t, ch)
	by := map[string]string{}
	items, _ := b.PlanItems(context.Background(), "s", 0)
	for _, it := range items {
		by[it.Command] = it.DecidedBy + "/" + string(it.Decision)
	}
	want := map[string]string{"rm -rf build": "rule:no-rm/deny", "make test": "rule:ok-make/allow", "ls": "host:ide/allow"}
	for k, v := range want {
		if by[k] != v {
			t.Errorf("%s decided %q, want %q", k, by[k], v)
		}
	}
}

// TestDataSourceDowngrade: an ask rule on a read becomes deny and the audit
// row says it was downgraded, unlike a plain deny; a read with no rule
// passes the precheck and reaches the hosts.
func TestDataSourceDowngrade(t *testing.T) {
	b := newBroker(t, confirm.Options{Policy: mustPolicy(t, `
[[rule]]
name = "ask-readme"
decision = "ask"
kind = "read"
title = "Read README*"
[[rule]]
name = "deny-fetch"
decision = "deny"
kind = "fetch"
`)})
	ide := newHost("ide")
	r := await(t, ask(b, toolReq("s", "1", "read", ""), ide))
	if opt, msg := outcome(t, r.result); opt != "reject-once" || msg != gate.PolicyDenyMessage {
		t.Errorf("read: %s %q", opt, msg)
	}
	r2 := await(t, ask(b, toolReq("s", "2", "fetch", ""), ide))
	if opt, _ := outcome(t, r2.result); opt != "reject-once" {
		t.Errorf("fetch: %s", opt)
	}
	down := planItem(t, b, "s", confirm.DecisionID("s", "1"))
	plain := planItem(t, b, "s", confirm.DecisionID("s", "2"))
	if !down.Downgraded || down.Policy != "ask" || down.Decision != "deny" || down.DecidedBy != "rule:ask-readme" {
		t.Errorf("downgraded row %+v", down)
	}
	if plain.Downgraded || plain.Policy != "deny" {
		t.Errorf("plain deny row %+v", plain)
	}
	ch := ask(b, toolReq("s", "3", "search", ""), ide)
	d := ide.wait(t)
	b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(selected("allow-once")))
	if opt, _ := outcome(t, await(t, ch).result); opt != "allow-once" {
		t.Errorf("search with no rule: %s", opt)
	}
}

// TestPolicyChangeMakesOneOffStale: a rule that denies the command, loaded
// while its one-off prompt is open, makes the approval stale.
func TestPolicyChangeMakesOneOffStale(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan})
	ide := newHost("ide")
	ch := ask(b, toolReq("s", "1", "execute", "python3 -c 'print(1)'"), ide)
	d := ide.wait(t)
	b.SetPolicy(mustPolicy(t, "[[rule]]\nname='no-python'\ndecision='deny'\ncommand='python3 *'"))
	_, _, err := b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-once"})
	if !errors.Is(err, confirm.ErrStale) {
		t.Fatalf("err = %v, want ErrStale", err)
	}
	if opt, msg := outcome(t, await(t, ch).result); opt != "reject-once" || msg != gate.StaleApprovalMessage {
		t.Errorf("agent got %s %q", opt, msg)
	}
}

// TestPlanOneOffOffer: the one-off hides persistent options, puts the
// seed-001 warning first, refuses persistent scopes and an unoffered
// option, and fails closed with the plan-safe refusal without a host.
func TestPlanOneOffOffer(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Mode: gate.ModePlan})
	ide := newHost("ide")
	ch := ask(b, toolReq("s", "1", "execute", "python3 -c 'print(1)'"), ide)
	d := ide.wait(t)
	if !d.OneOff() || len(d.Options()) != 2 || d.Options()[0].OptionID != "allow-once" || d.Options()[1].OptionID != "reject-once" {
		t.Fatalf("one-off %v offers %+v", d.OneOff(), d.Options())
	}
	if w := d.Snapshot().Warnings; len(w) == 0 || w[0] != gate.UnknownWarning {
		t.Errorf("warnings %q", w)
	}
	for _, a := range []confirm.Answer{{OptionID: "allow-once", Scope: policy.ScopeSession}, {OptionID: "allow-once", Scope: policy.ScopeAlways}} {
		if _, _, err := b.Answer(context.Background(), "s", d.ID(), "ide", a); !errors.Is(err, policy.ErrScopeRefused) || !errors.Is(err, confirm.ErrInvalidAnswer) {
			t.Errorf("scope %s: err = %v, want ErrScopeRefused", a.Scope, err)
		}
	}
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-always"}); !errors.Is(err, confirm.ErrInvalidAnswer) {
		t.Errorf("unoffered allow-always: err = %v", err)
	}
	b.Answer(context.Background(), "s", d.ID(), "ide", confirm.Answer{OptionID: "allow-once"})
	if opt, _ := outcome(t, await(t, ch).result); opt != "allow-once" {
		t.Errorf("agent got %s", opt)
	}
	// No host at all: the plan-safe refusal.
	r := await(t, ask(b, toolReq("s", "2", "execute", "python3 -c 'print(1)'")))
	if opt, msg := outcome(t, r.result); opt != "reject-once" || msg != gate.NoApprovalMessage {
		t.Errorf("no host: %s %q", opt, msg)
	}
}

// TestScopeSession: a SESSION allow answers the same command in the same
// session without a prompt, not another command nor another session.
func TestScopeSession(t *testing.T) {
	b := newBroker(t, confirm.Options{Classify: classifyCmd})
	ide := newHost("ide")
	ch := ask(b, toolReq("s", "1", "execute", "make test"), ide)
	d := ide.wait(t)
	// Over ACP: the scope rides in _meta.acpmux.scope.
	if err := b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(`{"outcome":{"outcome":"selected","optionId":"allow-once"},"_meta":{"acpmux":{"scope":"SESSION"}}}`)); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	r := await(t, ask(b, toolReq("s", "2", "execute", "make test"), ide))
	if opt, _ := outcome(t, r.result); opt != "allow-once" {
		t.Errorf("remembered: %s", opt)
	}
	if it := planItem(t, b, "s", confirm.DecisionID("s", "2")); !strings.HasPrefix(it.DecidedBy, "session:") {
		t.Errorf("decidedBy %q", it.DecidedBy)
	}
	for _, k := range []struct{ sid, cmd string }{{"s", "make lint"}, {"other", "make test"}} {
		ch := ask(b, toolReq(k.sid, "3", "execute", k.cmd), ide)
		d := ide.wait(t)
		b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(selected("reject-once")))
		await(t, ch)
	}
}

// TestScopeAlways: ALWAYS without a durable store is a distinct error and
// the decision stays open; with a file store the verdict is stored and
// applies from the next evaluation, also in a new broker.
func TestScopeAlways(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store store.Store
	}{{"no store", nil}, {"memory store", memStore(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBroker(t, confirm.Options{Store: tc.store, Classify: classifyCmd})
			ide := newHost("ide")
			ch := ask(b, toolReq("s", "1", "execute", "make test"), ide)
			d := ide.wait(t)
			_, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "allow-once", Scope: policy.ScopeAlways})
			if !errors.Is(err, policy.ErrAlwaysUnavailable) {
				t.Fatalf("err = %v, want ErrAlwaysUnavailable", err)
			}
			if d.Status() != store.StatusOpen {
				t.Fatalf("status %s, want still open", d.Status())
			}
			b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "reject-once"})
			await(t, ch)
		})
	}
	st := fileStore(t)
	b := newBroker(t, confirm.Options{Store: st, Classify: classifyCmd})
	ide := newHost("ide")
	ch := ask(b, toolReq("s", "1", "execute", "make test"), ide)
	d := ide.wait(t)
	if _, _, err := b.Answer(context.Background(), "s", d.ID(), "http", confirm.Answer{OptionID: "reject-once", Scope: policy.ScopeAlways}); err != nil {
		t.Fatal(err)
	}
	await(t, ch)
	b2 := newBroker(t, confirm.Options{Store: st, Classify: classifyCmd})
	r := await(t, ask(b2, toolReq("s2", "1", "execute", "make test"), ide))
	if opt, _ := outcome(t, r.result); opt != "reject-once" {
		t.Errorf("ALWAYS deny in a new broker: %s", opt)
	}
	if it := planItem(t, b2, "s2", confirm.DecisionID("s2", "1")); it.DecidedBy != "always:"+d.ID() {
		t.Errorf("decidedBy %q", it.DecidedBy)
	}
}

// TestBreaker: 5 consecutive denials cancel the turn once, further requests
// of the turn are denied, the next prompt resets it; 3 denials within the
// window trip a breaker configured for it even with approvals between.
func TestBreaker(t *testing.T) {
	var mu sync.Mutex
	var cancels []string
	cancel := func(sid, reason string) {
		mu.Lock()
		defer mu.Unlock()
		cancels = append(cancels, sid+": "+reason)
	}
	deny := mustPolicy(t, "[[rule]]\nname='no-rm'\ndecision='deny'\ncommand='rm *'\n[[rule]]\nname='ok-ls'\ndecision='allow'\ncommand='ls*'")
	b := newBroker(t, confirm.Options{Classify: classifyCmd, Policy: deny})
	b.UseSessions(turnCanceller(cancel))
	for i := range 5 {
		await(t, ask(b, toolReq("s", fmt.Sprint(i), "execute", "rm x"), newHost("ide")))
	}
	mu.Lock()
	n := len(cancels)
	mu.Unlock()
	if n != 1 || !strings.Contains(cancels[0], "5 consecutive denials") {
		t.Fatalf("cancels %q", cancels)
	}
	r := await(t, ask(b, toolReq("s", "6", "execute", "ls"), newHost("ide")))
	if opt, msg := outcome(t, r.result); opt != "reject-once" || msg != gate.BreakerMessage {
		t.Errorf("after tripping: %s %q", opt, msg)
	}
	b.PromptStarted("s")
	r = await(t, ask(b, toolReq("s", "7", "execute", "ls"), newHost("ide")))
	if opt, _ := outcome(t, r.result); opt != "allow-once" {
		t.Errorf("after the next prompt: %s", opt)
	}

	cancels = nil
	b = newBroker(t, confirm.Options{Classify: classifyCmd, Policy: deny,
		Breaker: confirm.Breaker{Consecutive: -1, WindowMax: 3, Window: time.Minute}})
	b.UseSessions(turnCanceller(cancel))
	for i, c := range []string{"rm a", "ls", "rm b", "ls", "rm c"} {
		await(t, ask(b, toolReq("w", fmt.Sprint(i), "execute", c), newHost("ide")))
	}
	if len(cancels) != 1 || !strings.Contains(cancels[0], "3 denials within 1m0s") {
		t.Errorf("window cancels %q", cancels)
	}
}

// TestAuditRowsImmutable: rows keep what was decided after a policy change,
// and the store refuses UPDATE and DELETE of them.
func TestAuditRowsImmutable(t *testing.T) {
	path := t.TempDir() + "/state.db"
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := newBroker(t, confirm.Options{Store: st, Classify: classifyCmd, Mode: gate.ModePlan})
	await(t, ask(b, toolReq("s", "1", "execute", "git status")))
	before := planItem(t, b, "s", confirm.DecisionID("s", "1"))
	if before.Decision != "allow" || before.DecidedBy != gate.BuiltinPlanReadOnly || before.Class != "read-only" {
		t.Fatalf("row %+v", before)
	}
	b.SetPolicy(mustPolicy(t, "[[rule]]\nname='no-git'\ndecision='deny'\ncommand='git *'"))
	await(t, ask(b, toolReq("s", "2", "execute", "git status")))
	after := planItem(t, b, "s", confirm.DecisionID("s", "1"))
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("row changed after the policy change:\n%+v\n%+v", before, after)
	}
	if it := planItem(t, b, "s", confirm.DecisionID("s", "2")); it.DecidedBy != "rule:no-git" || it.Decision != "deny" {
		t.Errorf("new row %+v", it)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE plan_items SET item = '{}'`); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("UPDATE: %v, want refused", err)
	}
	if _, err := db.Exec(`DELETE FROM plan_items`); err == nil {
		t.Error("DELETE was allowed")
	}
}
