package confirm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/store"
	"github.com/acpmux/acpmux/confirm/store/sqlite"
)

// Two hosts answer the same decision at the same instant, differently: the
// HTTP API (Answer) and a JSON-RPC host (AnswerResult). Exactly one answer
// reaches the agent; the loser gets ErrConflict and is journalled late.
func TestTwoAnswersSameInstant(t *testing.T) {
	trials := 1000
	if testing.Short() {
		trials = 100
	}
	for _, kind := range []string{"memory-sqlite", "file-sqlite"} {
		t.Run(kind, func(t *testing.T) {
			n := trials
			var s *sqlite.Store
			if kind == "file-sqlite" {
				s, n = fileStore(t), trials/5
			} else {
				s = memStore(t)
			}
			b := newBroker(t, confirm.Options{Store: s})
			wins := map[string]int{}
			for i := range n {
				wins[raceOnce(t, b, i)]++
			}
			t.Logf("%d trials: wins %v", n, wins)
		})
	}
}

func raceOnce(t *testing.T, b *confirm.Broker, i int) string {
	t.Helper()
	sid := fmt.Sprintf("s%d", i%7)
	api, ide := newHost("http"), newHost("ide")
	ch := ask(b, req(sid, fmt.Sprint("k", i)), api, ide)
	d := api.wait(t)
	ide.wait(t)
	start := make(chan struct{})
	var wg sync.WaitGroup
	var apiErr, ideErr error
	wg.Go(func() {
		<-start
		_, _, apiErr = b.Answer(context.Background(), sid, d.ID(), "http", confirm.Answer{OptionID: "allow-once"})
	})
	wg.Go(func() {
		<-start
		ideErr = b.AnswerResult(context.Background(), d.ID(), "ide", json.RawMessage(selected("reject-once")))
	})
	close(start)
	wg.Wait()
	r := await(t, ch)
	if r.err != nil {
		t.Fatalf("trial %d: Ask: %v", i, r.err)
	}
	var winner, loserErr = "", error(nil)
	switch {
	case apiErr == nil && errors.Is(ideErr, confirm.ErrConflict):
		winner, loserErr = "http", ideErr
		jsonEq(t, r.result, selected("allow-once"))
	case ideErr == nil && errors.Is(apiErr, confirm.ErrConflict):
		winner, loserErr = "ide", apiErr
		jsonEq(t, r.result, selected("reject-once"))
	default:
		t.Fatalf("trial %d: api err %v, ide err %v: want exactly one winner", i, apiErr, ideErr)
	}
	_ = loserErr
	v, err := b.Decision(context.Background(), sid, d.ID())
	if err != nil {
		t.Fatal(err)
	}
	evs := eventTypes(v)
	loser := map[string]string{"http": "ide", "ide": "http"}[winner]
	if count(evs, "answered@"+winner) != 1 || count(evs, "answered@"+loser) != 0 || count(evs, "late_answer@"+loser) != 1 {
		t.Fatalf("trial %d: journal %v", i, evs)
	}
	if v.ResolvedBy != winner {
		t.Fatalf("trial %d: resolvedBy %s, winner %s", i, v.ResolvedBy, winner)
	}
	return winner
}

// An answer racing the timeout: exactly one of answered and timed_out wins.
func TestAnswerRacesTimeout(t *testing.T) {
	b := newBroker(t, confirm.Options{Store: memStore(t)})
	outcomes := map[store.Status]int{}
	for i := range 200 {
		api := newHost("http")
		r := req("s", fmt.Sprint("k", i))
		r.Timeout = 2 * time.Millisecond
		ch := ask(b, r, api)
		var res askResult
		select {
		case <-api.presented:
		case res = <-ch: // timed out before it was presented
			jsonEq(t, res.result, selected("reject-once"))
			outcomes["before-presentation"]++
			continue
		}
		time.Sleep(time.Duration(i%5) * 500 * time.Microsecond)
		id := confirm.DecisionID("s", r.AgentKey)
		_, _, err := b.Answer(context.Background(), "s", id, "http", confirm.Answer{OptionID: "allow-once"})
		res = await(t, ch)
		v, _ := b.Decision(context.Background(), "s", id)
		st := v.Status
		outcomes[st]++
		switch st {
		case store.StatusAnswered:
			if err != nil {
				t.Fatalf("answered but Answer err %v", err)
			}
			jsonEq(t, res.result, selected("allow-once"))
		case store.StatusTimedOut:
			if !errors.Is(err, confirm.ErrConflict) {
				t.Fatalf("timed out but Answer err %v", err)
			}
			jsonEq(t, res.result, selected("reject-once"))
		default:
			t.Fatalf("status %s", st)
		}
	}
	t.Logf("outcomes %v", outcomes)
}
