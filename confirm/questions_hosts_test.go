package confirm_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/question"
	"github.com/acpmux/acpmux/confirm/store"
)

// TestQuestionFirstValidAnswerWinsAcrossHosts: the four kinds of host
// answer one question at once, each by its own path: the IDE on stdio and
// a WebSocket host with an ACP result (AnswerResult), the HTTP API and the
// stream-json host through AnswerQuestion (the stream-json host validates
// before it answers, so that a refused answer may be retried). One of
// them sends an invalid answer first. Exactly one valid answer wins, the
// agent gets exactly that answer, every other host's copy is withdrawn
// once, the losers are journalled as late answers and the refused one as
// an invalid answer.
func TestQuestionFirstValidAnswerWinsAcrossHosts(t *testing.T) {
	contents := map[string]string{
		"ide":         `{"action":"accept","content":{"count":1}}`,
		"ws-1":        `{"action":"accept","content":{"count":2,"name":"ws"}}`,
		"http":        `{"action":"decline"}`,
		"stream-json": `{"action":"accept","content":{"count":4}}`,
	}
	wins := map[string]int{}
	for i := 0; i < 40; i++ {
		b := newBroker(t, confirm.Options{})
		hosts := map[string]*fakeHost{}
		var ps []confirm.Presenter
		for _, id := range []string{"ide", "ws-1", "http", "stream-json"} {
			hosts[id] = newHost(id)
			ps = append(ps, hosts[id])
		}
		ch := askQ(b, qreq("s", "k", formParams("s")), ps...)
		var d *confirm.Decision
		for _, h := range hosts {
			d = h.wait(t)
		}
		var wg sync.WaitGroup
		errs := map[string]error{}
		var mu sync.Mutex
		answer := func(id string, f func() error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := f()
				mu.Lock()
				errs[id] = err
				mu.Unlock()
			}()
		}
		viaAPI := func(id string) func() error {
			return func() error {
				a, err := question.DecodeAnswer([]byte(contents[id]))
				if err != nil {
					return err
				}
				_, _, err = b.AnswerQuestion(context.Background(), "s", d.ID(), id, a)
				return err
			}
		}
		answer("ide", func() error {
			return b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(contents["ide"]))
		})
		answer("ws-1", func() error {
			return b.AnswerResult(context.Background(), d.ID(), "ws-1", json.RawMessage(contents["ws-1"]))
		})
		answer("http", viaAPI("http"))
		answer("stream-json", func() error {
			// A refused try first: the field is named and the host may retry.
			_, _, err := b.AnswerQuestion(context.Background(), "s", d.ID(), "stream-json", accept(map[string]any{"count": 40}))
			var fe *question.FieldError
			if !errors.As(err, &fe) || fe.Field != "content.count" {
				if !errors.Is(err, confirm.ErrConflict) {
					return errors.New("refused try: " + err.Error())
				}
			}
			return viaAPI("stream-json")()
		})
		wg.Wait()
		r := await(t, ch)
		if r.err != nil {
			t.Fatal(r.err)
		}
		v := d.View()
		winner := v.ResolvedBy
		wins[winner]++
		jsonEq(t, r.result, contents[winner])
		for id, err := range errs {
			if id == winner && err != nil {
				t.Fatalf("the winner %s got %v", id, err)
			}
			if id != winner && !errors.Is(err, confirm.ErrConflict) {
				t.Fatalf("%s lost to %s but got %v, want a conflict", id, winner, err)
			}
		}
		for id, h := range hosts {
			w := h.withdrawals()
			if id == winner && len(w) != 0 || id != winner && (len(w) != 1 || w[0].Status != store.StatusAnswered || w[0].By != winner) {
				t.Fatalf("%s (winner %s) withdrawals %+v", id, winner, w)
			}
		}
		evs := eventTypes(v)
		if count(evs, "answered@"+winner) != 1 || count(evs, "delivered") != 1 {
			t.Fatalf("journal %v", evs)
		}
		for id := range hosts {
			if id != winner && count(evs, "late_answer@"+id) == 0 {
				t.Fatalf("%s's losing answer not journalled: %v", id, evs)
			}
		}
		if winner != "stream-json" && count(evs, "invalid_answer@stream-json") > 1 {
			t.Fatalf("journal %v", evs)
		}
	}
	t.Logf("wins over 40 rounds: %v", wins)
}

// TestQuestionNobodyCanAnswerDeclinesAtOnce: with no presenter (no host
// advertised the mode and no API), the agent gets decline without any
// time passing (fake clock), and the journal says why: opened, cancelled
// with no_eligible_host, delivered.
func TestQuestionNobodyCanAnswerDeclinesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBroker(t, confirm.Options{Store: memStore(t)})
		start := time.Now()
		got, err := b.AskQuestion(context.Background(), qreq("s", "k", urlParams("s", "e")), nil)
		if err != nil {
			t.Fatal(err)
		}
		jsonEq(t, got, `{"action":"decline"}`)
		if el := time.Since(start); el != 0 {
			t.Fatalf("declined after %v", el)
		}
		v, err := b.Decision(context.Background(), "s", confirm.DecisionID("s", "k"))
		if err != nil {
			t.Fatal(err)
		}
		if evs := eventTypes(v); v.Reason != store.ReasonNoEligibleHost || len(evs) != 3 || evs[0] != "opened" || evs[1] != "cancelled" || evs[2] != "delivered" {
			t.Fatalf("reason %s journal %v", v.Reason, evs)
		}
	})
}
