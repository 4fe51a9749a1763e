package confirm

import (
	"context"
	"sync"
	"time"

	"github.com/acpmux/acpmux/confirm/store"
)

// The intervals of the read of claims awaiting their owner
// ([store.SettledReader]): the first read comes settleReadMin after a
// claim, and the interval doubles, up to settleReadMax, while no claim
// settles; a claim that settles sets it back.
const (
	settleReadMin = 2 * time.Millisecond
	settleReadMax = 50 * time.Millisecond
)

// settleReads is a broker's read of the claims it won that await their
// owner's delivery or refusal, on a store that does not notify it of
// those ([store.SettledReader]): one goroutine reads all of them in one
// query while any waits.
type settleReads struct {
	mu      sync.Mutex                     // guards waiting and running
	waiting map[string][]chan store.Record // by decision id; each has room for one record
	running bool
}

// await returns the record of decision id once its owner delivered or
// refused it, or ok false when ctx ends or remoteSettleWait passes first.
func (r *settleReads) await(ctx context.Context, sr store.SettledReader, id string) (store.Record, bool) {
	ch := make(chan store.Record, 1)
	r.mu.Lock()
	if r.waiting == nil {
		r.waiting = map[string][]chan store.Record{}
	}
	r.waiting[id] = append(r.waiting[id], ch)
	if !r.running {
		r.running = true
		go r.read(context.WithoutCancel(ctx), sr)
	}
	r.mu.Unlock()
	t := time.NewTimer(remoteSettleWait)
	defer t.Stop()
	select {
	case rec := <-ch:
		return rec, true
	case <-ctx.Done():
	case <-t.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	chs := r.waiting[id]
	for i, c := range chs {
		if c == ch {
			chs = append(chs[:i], chs[i+1:]...)
			break
		}
	}
	if len(chs) == 0 {
		delete(r.waiting, id)
	} else {
		r.waiting[id] = chs
	}
	select { // settled meanwhile
	case rec := <-ch:
		return rec, true
	default:
		return store.Record{}, false
	}
}

// read reads the waiting claims until none waits.
func (r *settleReads) read(ctx context.Context, sr store.SettledReader) {
	every := settleReadMin
	for {
		time.Sleep(every)
		r.mu.Lock()
		if len(r.waiting) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		ids := make([]string, 0, len(r.waiting))
		for id := range r.waiting {
			ids = append(ids, id)
		}
		r.mu.Unlock()
		recs, err := sr.Settled(ctx, ids)
		if err != nil || len(recs) == 0 {
			every = min(2*every, settleReadMax) // an error: the waits end at remoteSettleWait, as without an owner
			continue
		}
		every = settleReadMin
		r.mu.Lock()
		for _, rec := range recs {
			for _, ch := range r.waiting[rec.ID] {
				ch <- rec
			}
			delete(r.waiting, rec.ID)
		}
		r.mu.Unlock()
	}
}
