package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricsAgentScript asks one permission for a shell command, then ends
// the turn.
const metricsAgentScript = `
recv initialize
send {"jsonrpc":"2.0","id":$ID,"result":{"protocolVersion":1}}
recv session/new
send {"jsonrpc":"2.0","id":$ID,"result":{"sessionId":"s1"}}
recv session/prompt
send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}
send {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"touch x","kind":"execute","rawInput":{"command":"touch x"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}}
recv
send {"jsonrpc":"2.0","id":$ID,"result":{"stopReason":"end_turn"}}
waiteof
`

// TestMetricsAfterPermissionRoundTrip runs "acpmux run --listen" with a
// scripted agent, answers one permission request from the IDE, then
// scrapes /metrics (401 without the token) and parses it with the
// Prometheus text parser: messages and bytes per direction, hosts by kind,
// queue depth, hosts dropped, decisions by kind, route and status, the
// answer latency histogram, classifier verdicts and store errors.
func TestMetricsAfterPermissionRoundTrip(t *testing.T) {
	r := startRelayProcess(t, metricsAgentScript, "--state", ":memory:")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	perm := r.waitFor(t, "session/request_permission")
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": perm["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow"}}})
	r.send(t, string(b))
	r.waitFor(t, "") // the prompt turn's response: the agent had the answer

	anon, err := http.Get(r.apiURL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics without the token: %v", err)
	}
	anon.Body.Close() // an unclosed body keeps the connection's goroutines (leakcheck)
	if anon.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without the token: %v, want 401", anon.StatusCode)
	}
	// The IDE can read the last response before the host's writer has
	// accounted its write (it leaves the queue gauge once the write
	// returned): wait until it has, within a deadline.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if scrapeMetrics(t, r)[`acpmux_host_queue_messages{kind="stdio"}`] == 0 { // ide_queue_test.go
			break
		}
	}
	req, _ := http.NewRequest("GET", r.apiURL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f := families[name]
		if f == nil {
			return 0, false
		}
		for _, m := range f.Metric {
			if hasLabels(m, labels) {
				switch {
				case m.Counter != nil:
					return m.Counter.GetValue(), true
				case m.Gauge != nil:
					return m.Gauge.GetValue(), true
				case m.Histogram != nil:
					return float64(m.Histogram.GetSampleCount()), true
				}
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name    string
		labels  map[string]string
		want    float64
		atLeast bool
	}{
		{"acpmux_messages_total", map[string]string{"direction": "hosts_to_agent"}, 4, false}, // initialize, session/new, session/prompt, the answer
		{"acpmux_messages_total", map[string]string{"direction": "agent_to_hosts"}, 5, false}, // 3 responses, the update, the permission request
		{"acpmux_message_bytes_total", map[string]string{"direction": "hosts_to_agent"}, 200, true},
		{"acpmux_message_bytes_total", map[string]string{"direction": "agent_to_hosts"}, 400, true},
		{"acpmux_hosts", map[string]string{"kind": "stdio"}, 1, false},
		{"acpmux_host_queue_messages", map[string]string{"kind": "stdio"}, 0, false},
		{"acpmux_hosts_dropped_total", nil, 0, false},
		{"acpmux_decisions_total", map[string]string{"kind": "execute", "route": "ask", "status": "answered"}, 1, false},
		{"acpmux_decision_answer_seconds", map[string]string{"route": "ask"}, 1, false},
		{"acpmux_classifier_verdicts_total", map[string]string{"class": "write"}, 1, false},
		{"acpmux_classifier_verdicts_total", map[string]string{"class": "read-only"}, 0, false},
		{"acpmux_store_errors_total", map[string]string{"op": "insert"}, 0, false},
		{"acpmux_store_errors_total", map[string]string{"op": "claim"}, 0, false},
	} {
		got, ok := value(c.name, c.labels)
		if !ok || (!c.atLeast && got != c.want) || (c.atLeast && got < c.want) {
			t.Errorf("%s%v = %v (found %v), want %v (at least: %v)", c.name, c.labels, got, ok, c.want, c.atLeast)
		}
	}
}

// hasLabels reports whether m carries every label in want.
func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}
