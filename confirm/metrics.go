package confirm

import (
	"time"

	"github.com/acpmux/acpmux/confirm/gate"
	"github.com/acpmux/acpmux/confirm/store"
)

// Metrics receives the broker's counts, for the /metrics endpoint
// (docs/metrics.md). Its methods are called without the broker's locks
// held, from any goroutine, and must not block.
type Metrics interface {
	// DecisionClosed is called once for each decision when it closes. kind
	// is the tool call's kind as ACP names them ("other" for one outside
	// that set, or none); wait is the time from opening to closing.
	DecisionClosed(kind string, route gate.Route, status store.Status, wait time.Duration)
	// StoreError is called when a write to the Store fails; op is
	// "insert", "claim" or "append".
	StoreError(op string)
}

// toolKinds are the tool call kinds of ACP's ToolKind
// (https://agentclientprotocol.com/protocol/tool-calls).
var toolKinds = map[string]bool{"read": true, "edit": true, "delete": true, "move": true,
	"search": true, "execute": true, "think": true, "fetch": true, "switch_mode": true, "other": true}

// metricKind is kindOf(s) limited to ACP's tool kinds, so an agent cannot
// grow the set of metric labels.
func metricKind(s *Snapshot) string {
	if k := kindOf(s); toolKinds[k] {
		return k
	}
	return "other"
}

func (b *Broker) countClosed(d *Decision, res Resolution) {
	if m := b.opts.Metrics; m != nil {
		m.DecisionClosed(metricKind(&d.snap), d.snap.route(), res.Status, res.At.Sub(d.created))
	}
}

func (b *Broker) countStoreError(op string) {
	if m := b.opts.Metrics; m != nil {
		m.StoreError(op)
	}
}

// Done returns a channel that is closed when d closes (answered, timed
// out, cancelled or lost); [Decision.Status] then says how.
func (d *Decision) Done() <-chan struct{} { return d.done }
