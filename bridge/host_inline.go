package bridge

// inliner is a Conn whose writes can be tried without blocking
// (ndjsonConn over a pipe in non-blocking mode).
type inliner interface {
	canWriteNow() bool
	writeNow(msgs [][]byte) (k int, rest []byte, err error)
}

// deliver hands hb, a batch of the agent reader's, to the host: written
// at once on the reader's goroutine when the host's writer has nothing
// queued or being written and the conn takes it without blocking, else
// queued as sendBatch does. Written inline, the agent's lines cost no
// wakeup of the writer goroutine and their blocks go back to the pool at
// once. When the pipe takes only part of hb, the rest becomes the
// writer's carry, written before anything queued (the writer is woken
// for it), copied out of its blocks as a queued batch may be
// (hostBatch.compact), and counts in the queue's bounds as queued
// messages do. Like
// sendBatch, it reports false when the host is gone, and the caller
// gives up hb.
func (h *Host) deliver(hb hostBatch) bool {
	in, ok := h.conn.(inliner)
	if !ok || !in.canWriteNow() || h.msgs.Load() != 0 || !h.wmu.TryLock() {
		return h.sendBatch(hb)
	}
	if h.msgs.Load() != 0 || h.stopping() {
		h.wmu.Unlock()
		return h.sendBatch(hb)
	}
	k, rest, err := in.writeNow(hb.msgs)
	if err != nil {
		h.wmu.Unlock()
		hb.release()
		h.disconnect(err)
		return false
	}
	if k == len(hb.msgs) {
		h.wmu.Unlock()
		h.inlined.Add(1)
		hb.release()
		recycleMsgs(hb.msgs)
		return true
	}
	if k == 0 && len(rest) == len(hb.msgs[0]) {
		// Nothing written: queued like any batch.
		h.wmu.Unlock()
		return h.sendBatch(hb)
	}
	n := copy(hb.msgs, hb.msgs[k:])
	clear(hb.msgs[n:])
	hb.msgs = hb.msgs[:n]
	hb.msgs[0] = rest
	hb.n, hb.bytes, hb.runEnd = 0, 0, 0
	hb.count()
	hb.compact(h.joinsLines())
	h.reserve(int64(hb.bytes), int64(hb.n))
	h.carry = hb
	h.wmu.Unlock()
	h.carried.Add(1)
	select {
	case h.queue <- hostBatch{}: // wakes the writer for the carry
	default: // the queue is full: the writer has batches to wake it
	}
	return true
}

// stopping reports whether finish was called (the writer drains and
// stops: nothing more is written inline).
func (h *Host) stopping() bool {
	select {
	case <-h.flush:
		return true
	case <-h.gone:
		return true
	default:
		return false
	}
}

// takeCarry moves the carry, if any, to batch (the writer's, empty);
// called with wmu held.
func (h *Host) takeCarry(batch *hostBatch) {
	if h.carry.msgs != nil {
		batch.take(h.carry)
		h.carry = hostBatch{}
	}
}
