package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestIDEQueueHoldsAtMostIdeQueueLenMessages floods 15,000 notifications
// at an IDE that stops reading: its pipe fills, then its queue, and the
// agent reader waits. The queue then holds at most ideQueueLen (1024)
// messages, not the 4096 of --host-queue's default (remote hosts), and
// acpmux read less than the whole flood.
func TestIDEQueueHoldsAtMostIdeQueueLenMessages(t *testing.T) {
	const flood = 15000
	var script strings.Builder
	script.WriteString("recv initialize\nsend {\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"protocolVersion\":1}}\n")
	script.WriteString("recv session/new\nsend {\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":{\"sessionId\":\"s1\"}}\n")
	script.WriteString("recv session/prompt\n")
	for i := range flood {
		fmt.Fprintf(&script, `send {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of a flood the IDE does not read"}}}}`+"\n", i)
	}
	script.WriteString("waiteof\n")
	file := filepath.Join(t.TempDir(), "agent.script")
	if err := os.WriteFile(file, []byte(script.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startRelayProcess(t, "@"+file, "--state", ":memory:")
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	r.waitFor(t, "")
	r.send(t, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`)
	// From here on nothing reads acpmux's stdout. The agent reader stops
	// when the IDE's queue is full; across the process boundary the only
	// sign of that is its message counter standing still between scrapes.
	var read, queued, still float64
	deadline := time.Now().Add(60 * time.Second)
	for still < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent reader did not stop: %v messages read, %v queued for the IDE", read, queued)
		}
		time.Sleep(100 * time.Millisecond)
		m := scrapeMetrics(t, r)
		n := m[`acpmux_messages_total{direction="agent_to_hosts"}`]
		queued = m[`acpmux_host_queue_messages{kind="stdio"}`]
		if n == read && queued > 0 {
			still++
		} else {
			still = 0
		}
		read = n
	}
	if queued > ideQueueLen {
		t.Errorf("the IDE's queue holds %v messages, want at most %d", queued, ideQueueLen)
	}
	if read >= flood {
		t.Errorf("acpmux read %v of the agent's %d messages, want it to wait for the IDE", read, flood)
	}
}

// scrapeMetrics returns every counter and gauge of r's /metrics by its
// name and labels as Prometheus prints them (name{label="value"}).
func scrapeMetrics(t *testing.T, r *runningRelay) map[string]float64 {
	t.Helper()
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
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.Metric {
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			}
		}
	}
	return out
}
