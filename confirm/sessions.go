package confirm

import "errors"

// Sessions is what the broker needs of the sessions the bridge runs. The
// bridge hands itself to the broker with [Broker.UseSessions] when it is
// built (the broker is built first). Implementations must be safe for
// concurrent use and must not call back into the broker synchronously.
type Sessions interface {
	// SessionAlive reports whether session sessionID is known and its agent
	// still runs: an answer that wins the claim is committed only then
	// (revalidation; otherwise the decision closes with reason stale).
	SessionAlive(sessionID string) bool
	// CancelTurn cancels the prompt turn of sessionID on acpmux's own
	// initiative (the circuit breaker): session/cancel to the agent and
	// reason to every host of the session. It must not block for long.
	CancelTurn(sessionID, reason string)
}

// UseSessions gives the broker the bridge's sessions. Until it is called
// (and when s is nil) no session is revalidated and the circuit breaker is
// off. Call it before the first [Broker.Ask]; safe for concurrent use.
func (b *Broker) UseSessions(s Sessions) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sess = s
}

// bridge returns what UseSessions gave, or nil.
func (b *Broker) bridge() Sessions {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sess
}

// errSessionGone is the revalidation failure of a session that ended.
var errSessionGone = errors.New("the session or its agent is gone")
