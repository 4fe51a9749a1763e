package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// groupWrite is one write of a decision waiting for the group commit
// (Store.grouped): its pipelined statements and where its result goes.
type groupWrite struct {
	id    string // the decision the statements change
	b     *pgx.Batch
	chain *chainRows // its chained rows, appended after b's statements
	tags  []pgconn.CommandTag
	err   error
	done  chan struct{}
}

// grouper is a store instance's group commit: while one transaction of
// writes is in flight, later writes queue, and the next transaction takes
// every queued one (natural batching). So many claims through one instance
// (an inbox answering for many bridges) or many writes of one bridge's
// decisions cost one commit, and one wake-up of each listening backend,
// for all of them.
type grouper struct {
	mu      sync.Mutex // guards queue, running and alone
	queue   []*groupWrite
	running bool
	// alone holds the decisions whose write runs alone after its
	// transaction failed (rerunAlone): their later writes wait in the
	// queue until it ends, so that one decision's writes keep their order.
	alone map[string]bool
	// committed, when set (by tests: export_test.go), sees each group
	// transaction's size and error and returns the error to act on.
	committed func(n int, err error) error
}

// groupLockTimeout bounds how long a transaction of the group commit
// waits for a lock (lock_timeout): a row locked by another
// session (an operator's SELECT ... FOR UPDATE, a long transaction) fails
// the transaction with SQLSTATE 55P03, and its writes run again each
// alone, without the bound, so that only the write of the locked row
// waits for it and every other write of the process goes on. The bound
// covers the chained rows too: their head is this instance's own lane's
// (lanes.go), which only this instance's lone reruns also take, each last
// in its transaction and held for no round trip; one that holds it past
// the bound fails the group into lone reruns too, which wait unbounded.
const groupLockTimeout = "200ms"

// boundLockWait begins a group commit's transaction: set_config with
// is_local, which sets lock_timeout until the transaction ends. (SET LOCAL
// would do the same, but the statements of a pipeline up to its Sync are
// an implicit transaction, not a transaction block, so the server answered
// each SET LOCAL with a WARNING, in its log and to the client.) The
// session's own lock_timeout (from the server's, the database's or the
// role's settings: acpmux never sets it for a session) holds again after
// the transaction.
const boundLockWait = `SELECT set_config('lock_timeout', '` + groupLockTimeout + `', true)`

// grouped runs b, the pipelined statements of a write of decision id,
// then the chain_append_lane of its chained rows chain (which may be nil)
// on this instance's chain lane (lanes.go), in
// one transaction that it may share with other queued writes of other
// decisions, and returns each of b's statements' command tags. Each
// write's statements keep their order and their conditions (a claim is
// still its own conditional UPDATE, with its own rows affected); the
// transaction runs every write's row statements first, ordered by decision
// id, so that two instances' shared transactions lock rows in one order,
// and then every write's chained rows in one chain_append_lane, last (the
// lane's head is taken once, after every row lock: chainappend.go). Two writes
// of one decision never share a transaction.
// The transaction waits at most groupLockTimeout for a lock (a decision
// row's, or the lane head a lone rerun holds). When a shared transaction
// fails, or a transaction times out on a lock, each of its writes runs
// again alone (with no bound on the
// wait, and without holding up the next transactions), so one failing
// write fails only itself and one locked row delays only its own write.
func (s *Store) grouped(ctx context.Context, id string, b *pgx.Batch, chain *chainRows) ([]pgconn.CommandTag, error) {
	w := &groupWrite{id: id, b: b, chain: chain, done: make(chan struct{})}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.running
	g.running = true
	g.mu.Unlock()
	if lead {
		ctx := context.WithoutCancel(ctx)
		s.warm.Go(func() { s.runGroups(ctx) })
	}
	<-w.done
	return w.tags, w.err
}

// runGroups commits queued writes, a group per transaction, until the
// queue holds none it may take (a write of a decision whose earlier write
// runs alone waits for that).
func (s *Store) runGroups(ctx context.Context) {
	g := &s.group
	for {
		g.mu.Lock()
		var group, rest []*groupWrite
		seen := map[string]bool{}
		for _, w := range g.queue {
			if seen[w.id] || g.alone[w.id] {
				rest = append(rest, w) // a later transaction's
				continue
			}
			seen[w.id] = true
			group = append(group, w)
		}
		if len(group) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.queue = rest
		g.mu.Unlock()
		s.commitGroup(ctx, group)
	}
}

// commitGroup runs group in one pipelined transaction; when it fails, its
// writes run again alone (rerunAlone), and are done when that ends.
func (s *Store) commitGroup(ctx context.Context, group []*groupWrite) {
	slices.SortStableFunc(group, func(a, b *groupWrite) int { return strings.Compare(a.id, b.id) })
	lane, err := s.groupLane(ctx, group)
	if err != nil { // fail closed: nothing was written
		for _, w := range group {
			w.err = err
			close(w.done)
		}
		return
	}
	type at struct{ w, i int } // a statement: which write, which of its statements
	var order []at
	all := &pgx.Batch{}
	all.Queue(boundLockWait)
	chain := &chainRows{}
	for _, chained := range []bool{false, true} {
		for wi, w := range group {
			for qi, q := range w.b.QueuedQueries {
				if isChained(q.SQL) == chained {
					order = append(order, at{wi, qi})
					all.Queue(q.SQL, q.Arguments...)
				}
			}
			if chained && w.chain != nil {
				chain.addAll(w.chain)
			}
		}
	}
	chain.queue(all, lane)
	tags, err := s.pipelinedTags(ctx, all)
	if hook := s.group.committed; hook != nil {
		err = hook(len(group), err)
	}
	if err != nil && !rolledBack(err) {
		// The transaction may have committed (its COMMIT's result was
		// lost with the connection): running its writes again could find
		// a claim's own committed change and report a lost claim. The
		// outcome is unknown, and each write reports the error.
		for _, w := range group {
			w.err = err
			close(w.done)
		}
		return
	}
	if err != nil && (len(group) > 1 || isLockTimeout(err)) {
		s.rerunAlone(ctx, group)
		return
	}
	defer func() {
		for _, w := range group {
			close(w.done)
		}
	}()
	if err != nil { // one write, failing itself
		group[0].err = err
		return
	}
	for _, w := range group {
		w.tags = make([]pgconn.CommandTag, len(w.b.QueuedQueries))
	}
	// The statements' tags, past boundLockWait.
	for k, o := range order {
		group[o.w].tags[o.i] = tags[k+1]
	}
}

// groupLane returns this instance's chain lane when a write of group has
// chained rows (registering it on the first: lanes.go), else 0.
func (s *Store) groupLane(ctx context.Context, group []*groupWrite) (int64, error) {
	for _, w := range group {
		if w.chain.len() > 0 {
			return s.chainLane(ctx)
		}
	}
	return 0, nil
}

// rerunAlone runs each write of group, whose shared transaction failed,
// again in a transaction of its own, all at once and apart from the
// group commit's queue: with no bound on its wait for a row lock, as
// before group commit. Later writes of their decisions wait in the queue
// until theirs ends.
func (s *Store) rerunAlone(ctx context.Context, group []*groupWrite) {
	g := &s.group
	g.mu.Lock()
	if g.alone == nil {
		g.alone = map[string]bool{}
	}
	for _, w := range group {
		g.alone[w.id] = true
	}
	g.mu.Unlock()
	for _, w := range group {
		s.warm.Go(func() {
			w.tags, w.err = s.runAlone(ctx, w)
			close(w.done)
			g.mu.Lock()
			delete(g.alone, w.id)
			lead := !g.running && len(g.queue) > 0
			if lead {
				g.running = true
			}
			g.mu.Unlock()
			if lead {
				s.runGroups(ctx)
			}
		})
	}
}

// rolledBack reports whether err, a pipelined transaction's, means the
// transaction did not commit: the server refused a statement (a
// PostgreSQL error rolls back the implicit transaction), or nothing was
// sent (pgconn.SafeToRetry). Any other error (a connection lost while the
// transaction's result was on its way) leaves the outcome unknown.
func rolledBack(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) || pgconn.SafeToRetry(err)
}

// isLockTimeout reports whether err is PostgreSQL's lock_not_available
// (SQLSTATE 55P03), which a lock_timeout raises.
func isLockTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// isChained reports whether sql is a chained insert (chainedQuery), which
// takes the chain head.
func isChained(sql string) bool { return strings.HasPrefix(sql, chainedPrefix) }

// runAlone runs w in a transaction of its own: its statements, then the
// chain_append_lane of its chained rows, and returns its statements' tags.
func (s *Store) runAlone(ctx context.Context, w *groupWrite) ([]pgconn.CommandTag, error) {
	lane, err := s.groupLane(ctx, []*groupWrite{w})
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{QueuedQueries: slices.Clone(w.b.QueuedQueries)}
	w.chain.queue(b, lane)
	tags, err := s.pipelinedTags(ctx, b)
	if err != nil {
		return nil, err
	}
	return tags[:len(w.b.QueuedQueries)], nil
}
