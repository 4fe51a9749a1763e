package bridge

import (
	"context"
	"time"
)

// awaitPrimaryCalls waits, once the primary host has closed its input,
// until none of its requests still waits for the agent's response, for at
// most the grace period: an agent that stops reading at EOF, as many do,
// may drop what it has not answered yet. It returns early when the agent
// closes its stdout or exits, or ctx is done. See docs/run.md, "Shutdown
// and exit status".
func (b *Bridge) awaitPrimaryCalls(ctx context.Context, readDone <-chan struct{}) {
	b.mu.Lock()
	n := b.primaryCallsLocked()
	if n == 0 {
		b.mu.Unlock()
		return
	}
	drained := make(chan struct{})
	b.callsDrained = drained
	b.mu.Unlock()
	b.log.Debug("host closed its input; waiting for the agent's responses before closing its stdin", "host", b.primaryID(), "requests", n, "grace", b.opts.GracePeriod)
	t := time.NewTimer(b.opts.GracePeriod)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		b.mu.Lock()
		n = b.primaryCallsLocked()
		b.mu.Unlock()
		b.log.Warn("the agent did not answer the IDE's requests within the grace period; closing its stdin", "requests", n, "grace", b.opts.GracePeriod)
	case <-readDone:
	case <-b.agent.Exited():
	case <-ctx.Done():
	}
	b.mu.Lock()
	b.callsDrained = nil
	b.mu.Unlock()
}

// primaryCallsLocked counts the primary host's requests waiting for the
// agent's response. b.mu must be held.
func (b *Bridge) primaryCallsLocked() int {
	n := 0
	for _, c := range b.calls {
		if c.host == b.primary {
			n++
		}
	}
	return n
}

// callDoneLocked wakes awaitPrimaryCalls when the last request of the
// primary host it waits for got its response. b.mu must be held.
func (b *Bridge) callDoneLocked() {
	if b.callsDrained != nil && b.primaryCallsLocked() == 0 {
		close(b.callsDrained)
		b.callsDrained = nil
	}
}
