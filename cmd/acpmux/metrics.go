package main

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/acpmux/acpmux/bridge"
	"github.com/acpmux/acpmux/confirm"
	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/store"
)

// metrics are the Prometheus metrics of one relay (docs/metrics.md). The
// bridge's traffic and hosts are read from [bridge.Bridge.Stats] at scrape
// time, so the relay's hot path pays only its own atomic counters.
type metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	answer    *prometheus.HistogramVec
	verdicts  *prometheus.CounterVec
	storeErrs *prometheus.CounterVec
}

// newMetrics registers the relay's metrics; stats is called at each scrape
// (it returns false before the bridge exists).
func newMetrics(stats func() (bridge.Stats, bool)) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acpmux_decisions_total",
			Help: "Decisions closed, by tool call kind, gate route and final status."}, []string{"kind", "route", "status"}),
		answer: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "acpmux_decision_answer_seconds",
			Help:    "Time from a decision's opening to its answer, for answered decisions, by gate route.",
			Buckets: []float64{0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600}}, []string{"route"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acpmux_classifier_verdicts_total",
			Help: "Shell commands classified for permission requests, by class."}, []string{"class"}),
		storeErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "acpmux_store_errors_total",
			Help: "Failed writes to the decision store, by operation."}, []string{"op"}),
	}
	for _, op := range []string{"insert", "claim", "append"} {
		m.storeErrs.WithLabelValues(op)
	}
	for _, c := range []string{"read-only", "write", "unknown"} {
		m.verdicts.WithLabelValues(c)
	}
	m.reg.MustRegister(m.decisions, m.answer, m.verdicts, m.storeErrs, bridgeCollector{stats},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the metrics in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// DecisionClosed implements [confirm.Metrics].
func (m *metrics) DecisionClosed(kind string, route gate.Route, status store.Status, wait time.Duration) {
	m.decisions.WithLabelValues(kind, string(route), string(status)).Inc()
	if status == store.StatusAnswered {
		m.answer.WithLabelValues(string(route)).Observe(wait.Seconds())
	}
}

// StoreError implements [confirm.Metrics].
func (m *metrics) StoreError(op string) { m.storeErrs.WithLabelValues(op).Inc() }

// classify wraps a confirm.Options.Classify function to count its verdicts.
func (m *metrics) classify(f func(string) confirm.Classification) func(string) confirm.Classification {
	return func(cmd string) confirm.Classification {
		c := f(cmd)
		m.verdicts.WithLabelValues(c.Class).Inc()
		return c
	}
}

var (
	descMessages = prometheus.NewDesc("acpmux_messages_total", "Messages received from the agent (agent_to_hosts, each counted once however many hosts it went to) or from hosts (hosts_to_agent).", []string{"direction"}, nil)
	descBytes    = prometheus.NewDesc("acpmux_message_bytes_total", "Bytes of the messages in acpmux_messages_total, newlines excluded.", []string{"direction"}, nil)
	descHosts    = prometheus.NewDesc("acpmux_hosts", "Hosts attached now, by kind (stdio, websocket, terminal, other).", []string{"kind"}, nil)
	descQueue    = prometheus.NewDesc("acpmux_host_queue_messages", "Messages waiting in the writer queues of the attached hosts, summed by host kind.", []string{"kind"}, nil)
	descDropped  = prometheus.NewDesc("acpmux_hosts_dropped_total", "Hosts disconnected because their writer queue was full (too slow).", nil, nil)
	descInvalid  = prometheus.NewDesc("acpmux_messages_invalid_total", "Messages not forwarded: agent stdout lines that were not JSON (non_json), and invalid or unroutable messages (invalid).", []string{"reason"}, nil)
)

// bridgeCollector turns bridge.Stats into metrics at scrape time.
type bridgeCollector struct{ stats func() (bridge.Stats, bool) }

func (bridgeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMessages, descBytes, descHosts, descQueue, descDropped, descInvalid} {
		ch <- d
	}
}

func (c bridgeCollector) Collect(ch chan<- prometheus.Metric) {
	s, _ := c.stats()
	counter := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(descMessages, s.FromAgent.Messages, "agent_to_hosts")
	counter(descMessages, s.FromHosts.Messages, "hosts_to_agent")
	counter(descBytes, s.FromAgent.Bytes, "agent_to_hosts")
	counter(descBytes, s.FromHosts.Bytes, "hosts_to_agent")
	counter(descDropped, s.HostsDropped)
	counter(descInvalid, s.NonJSON, "non_json")
	counter(descInvalid, s.Dropped, "invalid")
	hosts, queued := map[string]int64{}, map[string]int64{}
	for _, h := range s.Hosts {
		hosts[h.Kind]++
		queued[h.Kind] += h.Queued
	}
	for k, n := range hosts {
		ch <- prometheus.MustNewConstMetric(descHosts, prometheus.GaugeValue, float64(n), k)
		ch <- prometheus.MustNewConstMetric(descQueue, prometheus.GaugeValue, float64(queued[k]), k)
	}
}
