package main

import (
	"io"
	"net/http"
	"testing"
)

// TestListenServesHealthz: "acpmux run --listen" answers GET /healthz with
// 200 "ok\n" to a client without the token.
func TestListenServesHealthz(t *testing.T) {
	r := startRelayProcess(t, permAgentScript, "--state", ":memory:")
	resp, err := http.Get(r.apiURL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("GET /healthz: %d %q, want 200 \"ok\\n\"", resp.StatusCode, body)
	}
}
