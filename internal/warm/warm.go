// Package warm runs short-lived functions on goroutines it keeps for a
// while after they finish, so that work started once per write or per
// answer (a group commit's lead, the settling of a claim) runs on a stack
// an earlier function already grew instead of growing a new goroutine's
// 8 KiB stack by copying, again and again, through JSON encoding and the
// database driver.
package warm

import (
	"sync"
	"time"
)

// Pool runs functions on its goroutines. The zero Pool is not usable:
// make one with [New]. Its methods may be called from any goroutine.
type Pool struct {
	linger time.Duration
	work   chan func() // unbuffered: a send succeeds only to an idle goroutine
	stop   chan struct{}
	once   sync.Once
}

// New returns a pool whose goroutines wait up to linger for their next
// function after each one, then end.
func New(linger time.Duration) *Pool {
	return &Pool{linger: linger, work: make(chan func()), stop: make(chan struct{})}
}

// Go runs f on an idle goroutine of p, or on a new one when none is idle;
// it never waits for f. After [Pool.Close], f still runs, on a goroutine
// that ends with it.
func (p *Pool) Go(f func()) {
	select {
	case p.work <- f:
	default:
		go p.run(f)
	}
}

// run runs f, then each function handed to it while it waits, until it
// waited linger for none or p is closed.
func (p *Pool) run(f func()) {
	t := time.NewTimer(p.linger)
	defer t.Stop()
	for {
		f()
		t.Reset(p.linger)
		select {
		case f = <-p.work:
		case <-t.C:
			return
		case <-p.stop:
			return
		}
	}
}

// Close ends p's idle goroutines now, and each busy one when its function
// returns; it does not wait for them. Close may be called more than once.
func (p *Pool) Close() { p.once.Do(func() { close(p.stop) }) }
