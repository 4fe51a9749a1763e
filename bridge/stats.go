package bridge

// Stats is a snapshot of the bridge's counters, for metrics. Counters count
// from the bridge's start; Hosts is the hosts attached now.
type Stats struct {
	// FromAgent counts the messages read from the agent (each counted once,
	// however many hosts it went to) and their bytes, newline excluded.
	FromAgent Traffic
	// FromHosts counts the messages read from all hosts together and their
	// bytes (a JSON-RPC batch is one message).
	FromHosts Traffic
	// Hosts holds one entry per attached host.
	Hosts []HostStats
	// HostsDropped counts the hosts disconnected because their writer
	// queue was full ([ErrHostTooSlow]).
	HostsDropped int64
	// NonJSON and Dropped count the agent's stdout lines that were not JSON
	// and the messages dropped as invalid or unroutable, both directions.
	NonJSON, Dropped int64
}

// Traffic is a count of messages and their bytes.
type Traffic struct{ Messages, Bytes int64 }

// HostStats describes one attached host.
type HostStats struct {
	// Kind is the host's [HostOptions.Kind] ("other" when it was empty).
	Kind string
	// Queued is the number of messages in its writer queue.
	Queued int64
}

// Stats returns a snapshot of the bridge's counters. Safe for concurrent
// use; it takes the bridge's lock briefly, so call it at scrape time, not
// per message.
func (b *Bridge) Stats() Stats {
	s := Stats{
		FromAgent:    Traffic{b.stats.agentMsgs.Load(), b.stats.agentBytes.Load()},
		FromHosts:    Traffic{b.stats.hostMsgs.Load(), b.stats.hostBytes.Load()},
		HostsDropped: b.stats.tooSlow.Load(),
		NonJSON:      b.stats.nonJSON.Load(),
		Dropped:      b.stats.dropped.Load(),
	}
	b.mu.Lock()
	hosts := b.hosts
	b.mu.Unlock()
	for _, h := range hosts {
		s.Hosts = append(s.Hosts, HostStats{Kind: h.kind, Queued: h.msgs.Load()})
	}
	return s
}

// hostDropped counts a host in HostsDropped and logs it, at the moment
// it is disconnected as too slow (its connection may take seconds more to
// close: a WebSocket close frame waits on a peer that does not read).
func (b *Bridge) hostDropped(h *Host) {
	b.stats.tooSlow.Add(1)
	b.log.Warn("host dropped: it did not read fast enough", "host", h.ID, "cause", ErrHostTooSlow)
}
