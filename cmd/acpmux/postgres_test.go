package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/acpmux/acpmux/internal/pgtest"
)

// TestPostgresStateDecisionAnsweredThroughAPI: "acpmux run --state
// postgres://… --listen 127.0.0.1:0 --headless" with a scripted agent: the
// agent's permission request opens a decision, the decisions API answers
// it, the agent gets that answer, and the decision row, answered, is in
// PostgreSQL. The URL's password never reaches the log.
func TestPostgresStateDecisionAnsweredThroughAPI(t *testing.T) {
	srv := pgtest.Start(t)
	url := srv.Database(t)
	// The test server trusts local connections, so a password in the URL
	// is accepted and never checked: enough to see that it is not logged.
	withPassword := strings.Replace(url, "?", "?password=hunter2-secret&", 1)
	r, agentLog := startHeadless(t, "--state", withPassword)
	did := openDecision(t, r)
	req, _ := http.NewRequest("POST", r.apiURL+"/v1/sessions/s1/decisions/"+did, bytes.NewBufferString(`{"optionId":"allow"}`))
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("answer: %d", resp.StatusCode)
	}
	ideSawUntilDone(t, r)
	log, _ := os.ReadFile(agentLog)
	if !strings.Contains(string(log), `"id":"bg1","result":{"outcome":{"outcome":"selected","optionId":"allow"}`) {
		t.Errorf("the agent did not get the API's allow:\n%s", log)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var status, option, session string
	if err := conn.QueryRow(ctx, `SELECT status, answer_option, session_id FROM decisions WHERE id = $1`, did).
		Scan(&status, &option, &session); err != nil {
		t.Fatalf("decision %s in PostgreSQL: %v", did, err)
	}
	if status != "answered" || option != "allow" || session != "s1" {
		t.Errorf("row of %s: status %s option %s session %s, want answered allow s1", did, status, option, session)
	}

	r.stdin.Close()
	r.cmd.Wait()
	sawState := false
	for l := range drained(r.logLines) {
		if strings.Contains(l, "hunter2-secret") {
			t.Errorf("acpmux logged the store's password: %s", l)
		}
		sawState = sawState || strings.Contains(l, "password=xxxxx")
	}
	if !sawState {
		t.Error("acpmux did not log the store's URL with the password redacted")
	}
}

// drained yields the lines left in ch until it is empty.
func drained(ch chan string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for {
			select {
			case l := <-ch:
				if !yield(l) {
					return
				}
			default:
				return
			}
		}
	}
}
