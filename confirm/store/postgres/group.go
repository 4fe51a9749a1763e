package postgres

import (
	"context"
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
	mu      sync.Mutex // guards queue and running
	queue   []*groupWrite
	running bool
}

// grouped runs b, the pipelined statements of a write of decision id,
// then the chain_append of its chained rows chain (which may be nil), in
// one transaction that it may share with other queued writes of other
// decisions, and returns each of b's statements' command tags. Each
// write's statements keep their order and their conditions (a claim is
// still its own conditional UPDATE, with its own rows affected); the
// transaction runs every write's row statements first, ordered by decision
// id, so that two instances' shared transactions lock rows in one order,
// and then every write's chained rows in one chain_append, last (the chain
// head is taken once, after every row lock: chainappend.go). Two writes
// of one decision never share a transaction.
// When a shared transaction fails, each of its writes runs again alone, so
// one failing write fails only itself.
func (s *Store) grouped(ctx context.Context, id string, b *pgx.Batch, chain *chainRows) ([]pgconn.CommandTag, error) {
	w := &groupWrite{id: id, b: b, chain: chain, done: make(chan struct{})}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.running
	g.running = true
	g.mu.Unlock()
	if lead {
		go s.runGroups(context.WithoutCancel(ctx))
	}
	<-w.done
	return w.tags, w.err
}

// runGroups commits queued writes, a group per transaction, until the
// queue is empty.
func (s *Store) runGroups(ctx context.Context) {
	g := &s.group
	for {
		g.mu.Lock()
		if len(g.queue) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		var group, rest []*groupWrite
		seen := map[string]bool{}
		for _, w := range g.queue {
			if seen[w.id] {
				rest = append(rest, w) // the next transaction's
				continue
			}
			seen[w.id] = true
			group = append(group, w)
		}
		g.queue = rest
		g.mu.Unlock()
		s.commitGroup(ctx, group)
	}
}

// commitGroup runs group in one pipelined transaction.
func (s *Store) commitGroup(ctx context.Context, group []*groupWrite) {
	defer func() {
		for _, w := range group {
			close(w.done)
		}
	}()
	if len(group) == 1 {
		group[0].tags, group[0].err = s.runAlone(ctx, group[0])
		return
	}
	slices.SortStableFunc(group, func(a, b *groupWrite) int { return strings.Compare(a.id, b.id) })
	type at struct{ w, i int } // a statement: which write, which of its statements
	var order []at
	all := &pgx.Batch{}
	chain := &chainRows{}
	for wi, w := range group {
		for qi, q := range w.b.QueuedQueries {
			order = append(order, at{wi, qi})
			all.Queue(q.SQL, q.Arguments...)
		}
		if w.chain != nil {
			chain.addAll(w.chain)
		}
	}
	chain.queue(all)
	tags, err := s.pipelinedTags(ctx, all)
	if err != nil {
		for _, w := range group { // alone, so that only the failing one fails
			w.tags, w.err = s.runAlone(ctx, w)
		}
		return
	}
	for _, w := range group {
		w.tags = make([]pgconn.CommandTag, len(w.b.QueuedQueries))
	}
	for k, o := range order {
		group[o.w].tags[o.i] = tags[k]
	}
}

// runAlone runs w in a transaction of its own: its statements, then the
// chain_append of its chained rows, and returns its statements' tags.
func (s *Store) runAlone(ctx context.Context, w *groupWrite) ([]pgconn.CommandTag, error) {
	b := &pgx.Batch{QueuedQueries: slices.Clone(w.b.QueuedQueries)}
	w.chain.queue(b)
	tags, err := s.pipelinedTags(ctx, b)
	if err != nil {
		return nil, err
	}
	return tags[:len(w.b.QueuedQueries)], nil
}
