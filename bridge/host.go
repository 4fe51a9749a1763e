package bridge

import (
	"cmp"
	"encoding/json"
	"errors"

	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acpmux/acpmux/acp"
	"github.com/acpmux/acpmux/confirm/identity"
)

// DefaultHostQueueLen is the default number of messages a host's writer
// queue holds before a remote host is disconnected as too slow.
const DefaultHostQueueLen = 4096

// DefaultHostQueueBytes bounds the bytes queued for one host (64 MiB): past
// it a blocking host makes the agent wait and a remote host is
// disconnected. One message larger than that still goes through alone.
const DefaultHostQueueBytes = 64 << 20

// ErrHostTooSlow is the cause recorded for a host disconnected because its
// bounded writer queue was full.
var ErrHostTooSlow = errors.New("host too slow: writer queue full")

// Host is one connected client of the bridge (an IDE over stdio, a web
// page or remote client over WebSocket, a script). It owns one reader and
// one writer goroutine, both started and waited for by Bridge.Run.
//
// A Host with Blocking set (the stdio IDE that launched acpmux) applies
// backpressure to the agent when its queue is full, as a direct pipe would;
// any other host whose queue is full is disconnected with ErrHostTooSlow.
type Host struct {
	// ID names the host in logs, the journal and resolved notices.
	ID string
	// Blocking makes a full queue wait instead of disconnecting the host.
	Blocking bool
	// Driver: never asked for confirmations (HostOptions.Driver).
	Driver bool
	// teammate is the name the host said in _acpmux/teammate/hello, or
	// "" (guarded by the bridge's mu; docs/teammates.md).
	teammate string

	kind     string           // HostOptions.Kind, for Stats
	person   *identity.Person // HostOptions.Person (host_person.go)
	notices  atomic.Bool      // its initialize advertised clientCapabilities.session.notices
	conn     Conn
	queue    chan hostBatch // batches of messages, in order
	queued   atomic.Int64   // bytes in queue
	msgs     atomic.Int64   // messages in queue
	maxBytes int64          // bound on queued
	maxMsgs  int64          // bound on msgs
	space    chan struct{}  // the writer freed some room
	gone     chan struct{}  // closed when the host is disconnected
	flush    chan struct{}  // closed to ask the writer to drain and stop
	wdone    chan struct{}  // closed when the writer has stopped

	// wmu is held by whoever writes to conn: the writer goroutine, or
	// the agent reader writing a batch inline (deliver). The reader only
	// tries it and never waits, so a blocked write delays no one else.
	wmu   sync.Mutex
	carry hostBatch // guarded by wmu: the rest of an inline write, written before the queue

	inlined, carried atomic.Int64 // batches deliver wrote inline, and those it left a carry of (tests)

	goneOnce, flushOnce sync.Once
	cause               atomic.Value // error: why the host is gone

	nextID atomic.Int64 // ids of agent → host requests, never reused

	// elicitForm, elicitURL: the host advertised
	// clientCapabilities.elicitation.form / .url in its initialize.
	elicitForm, elicitURL atomic.Bool

	mu       sync.Mutex        // guards inflight, outgoing
	inflight map[string]string // host request id key → bridge id key
	// onDropped, set by AddHost before the host's goroutines start, runs
	// once when the host is disconnected with ErrHostTooSlow.
	onDropped func()
	outgoing  map[string]*outCall // host-side id key → the agent request it carries
}

// outCall is an agent → host request waiting for the host's response.
type outCall struct {
	agentID  []byte // the agent's raw id, restored on the response
	method   string
	decision string // for a presented permission request: the decision id

	relay *relayCall // for a request forwarded to a teammate: who asked it
}

// HostOptions configure a [Host]. The zero value is a remote host with the
// default queue.
type HostOptions struct {
	// Blocking makes the agent wait when the host's queue is full (the
	// stdio IDE); a host that is not blocking is disconnected instead.
	Blocking bool
	// QueueLen is the writer queue's length in messages
	// (DefaultHostQueueLen when 0 or less).
	QueueLen int
	// Driver marks a host that drives the agent (prompts, owns sessions,
	// serves fs/* and terminal/*) but is never asked for confirmations:
	// acpmux run --headless. Its sessions' permission requests go to the
	// other hosts and presenters (the page, the decisions API) only, and
	// fail closed when none answers. See docs/run.md, "Headless".
	Driver bool
	// Kind names the kind of host in [Bridge.Stats] ("stdio", "websocket",
	// "terminal", ...); "" means "other".
	Kind string
	// Person, when not nil, is who the host's bearer token authenticates
	// (docs/tokens.md): its role limits what the host may send and whether
	// it is asked for confirmations, and its answers are journalled with
	// the person. Nil (the stdio IDE, stream-json) is not limited.
	Person *identity.Person
}

// NewHost returns a host over conn with opts. It starts nothing; pass it
// to [Bridge.AddHost].
func NewHost(id string, conn Conn, opts HostOptions) *Host {
	blocking, queueLen := opts.Blocking, opts.QueueLen
	if queueLen <= 0 {
		queueLen = DefaultHostQueueLen
	}
	return &Host{
		ID: id, Blocking: blocking, Driver: opts.Driver, conn: conn, kind: cmp.Or(opts.Kind, "other"), person: opts.Person,
		queue:    make(chan hostBatch, queueLen),
		maxBytes: DefaultHostQueueBytes,
		maxMsgs:  int64(queueLen),
		space:    make(chan struct{}, 1),
		gone:     make(chan struct{}),
		flush:    make(chan struct{}),
		wdone:    make(chan struct{}),
		inflight: map[string]string{},
		outgoing: map[string]*outCall{},
	}
}

// Done is closed when the host has been disconnected.
func (h *Host) Done() <-chan struct{} { return h.gone }

// Err returns why the host was disconnected, or nil while it is connected.
func (h *Host) Err() error {
	if err, ok := h.cause.Load().(error); ok {
		return err
	}
	return nil
}

// hostBatch is messages handed to a host's writer at once, in order, and
// the blocks of the agent's stdout some of them are lines of (lineBlock),
// each retained once for the batch: the writer releases them once it has
// written the batch. A batch that is never written (the host is gone) is
// released by sendBatch or left to the collector, never released early.
//
// For a host that writes NDJSON (joinsLines), lines that lie one after
// the other in a block are joined into one entry of msgs, the slice of the
// block from the first line's start to the last line's end (the newlines
// between them included, the last one just past the entry's length and
// within its capacity): the writer then writes them in one piece from the
// block (ndjsonConn.WriteMessages) and the batch carries one entry instead
// of hundreds. n and bytes count the messages and their bytes, newlines
// not included, as if none were joined.
type hostBatch struct {
	msgs   [][]byte
	blocks []*lineBlock
	n      int // messages in msgs (more than len(msgs) when lines were joined); 0: len(msgs)
	bytes  int // bytes of those messages (valid when n > 0)
	runEnd int // where the last entry ends in the last block when it may be joined to, else 0
}

// add appends msg, a line of blk (nil: a message of its own), retaining
// blk unless the batch already holds it.
func (hb *hostBatch) add(msg []byte, blk *lineBlock) {
	hb.count()
	hb.msgs = append(hb.msgs, msg)
	hb.n++
	hb.bytes += len(msg)
	hb.runEnd = 0
	if blk != nil && (len(hb.blocks) == 0 || hb.blocks[len(hb.blocks)-1] != blk) {
		blk.retain()
		hb.blocks = append(hb.blocks, blk)
	}
}

// addLine appends msg, which is blk.buf[off:off+len(msg)] with a "\n" at
// blk.buf[off+len(msg)], joining it to the last entry when that ends in
// the same block just before this line's start (its newline between).
func (hb *hostBatch) addLine(msg []byte, blk *lineBlock, off int) { hb.addLines(msg, blk, off, 1) }

// addLines is addLine for msg holding lines whole lines one after the
// other, a "\n" between each two: they count as lines messages.
func (hb *hostBatch) addLines(msg []byte, blk *lineBlock, off, lines int) {
	end := off + len(msg)
	size := len(msg) - (lines - 1) // the messages' bytes, newlines not included
	if k := len(hb.msgs) - 1; k >= 0 && hb.runEnd > 0 && hb.runEnd+1 == off && hb.blocks[len(hb.blocks)-1] == blk {
		start := hb.runEnd - len(hb.msgs[k])
		hb.msgs[k] = blk.buf[start : end : end+1]
		hb.n += lines
		hb.bytes += size
		hb.runEnd = end
		return
	}
	hb.add(blk.buf[off:end:end+1], blk)
	hb.n += lines - 1
	hb.bytes -= lines - 1
	hb.runEnd = end
}

// count makes n and bytes valid (a batch built as a literal has n 0).
func (hb *hostBatch) count() {
	if hb.n == 0 {
		hb.bytes = 0
		for _, m := range hb.msgs {
			hb.bytes += len(m)
		}
		hb.n = len(hb.msgs)
	}
}

// release drops the batch's holds on its blocks.
func (hb *hostBatch) release() {
	for i, blk := range hb.blocks {
		blk.release()
		hb.blocks[i] = nil
	}
	hb.blocks = hb.blocks[:0]
}

// joinsLines reports whether lines of the agent may be joined in the
// host's batches: its Conn writes NDJSON itself (not wrapped by a tap,
// which records each message).
func (h *Host) joinsLines() bool {
	_, ok := h.conn.(*ndjsonConn)
	return ok
}

// send queues msg for the host. It reports false when the host is gone or,
// for a non-blocking host, was just disconnected because its queue (in
// messages or in bytes) is full. A blocking host makes the caller wait.
func (h *Host) send(msg []byte) bool { return h.sendBatch(hostBatch{msgs: [][]byte{msg}}) }

// sendBatch queues hb, in order, as one hand-over to the writer (one
// wakeup for many messages). The caller gives up hb, and its holds on
// blocks: released here when hb is not queued, and when its messages are
// few bytes of its blocks, copied out first (hostBatch.compact). Like
// send.
func (h *Host) sendBatch(hb hostBatch) bool {
	hb.compact(h.joinsLines())
	if !h.queueBatch(hb) {
		hb.release()
		return false
	}
	return true
}

func (h *Host) queueBatch(hb hostBatch) bool {
	hb.count()
	n, k := int64(hb.bytes), int64(hb.n)
	full := func() bool {
		q, c := h.queued.Load(), h.msgs.Load()
		return c > 0 && (q+n > h.maxBytes || c+k > h.maxMsgs)
	}
	if h.Blocking {
		for full() {
			select {
			case <-h.space:
			case <-h.gone:
				return false
			}
		}
		h.reserve(n, k)
		select {
		case h.queue <- hb:
			return true
		case <-h.gone:
			h.reserve(-n, -k)
			return false
		}
	}
	select {
	case <-h.gone:
		return false
	default:
	}
	if full() {
		h.disconnect(ErrHostTooSlow)
		return false
	}
	h.reserve(n, k)
	select {
	case h.queue <- hb:
		return true
	default:
		h.reserve(-n, -k)
		h.disconnect(ErrHostTooSlow)
		return false
	}
}

func (h *Host) reserve(bytes, msgs int64) {
	h.queued.Add(bytes)
	h.msgs.Add(msgs)
}

// written accounts for the messages of batch, which the writer has
// written.
func (h *Host) written(batch *hostBatch) {
	batch.count()
	h.reserve(-int64(batch.bytes), -int64(batch.n))
	select {
	case h.space <- struct{}{}:
	default:
	}
}

// disconnect marks the host gone with cause and closes its connection
// (with the cause, for a Conn that can say why, such as a WebSocket).
func (h *Host) disconnect(cause error) {
	h.goneOnce.Do(func() {
		h.cause.Store(cause)
		if h.onDropped != nil && errors.Is(cause, ErrHostTooSlow) {
			h.onDropped()
		}
		if cc, ok := h.conn.(interface{ CloseWithCause(error) error }); ok {
			cc.CloseWithCause(cause)
		} else {
			h.conn.Close()
		}
		close(h.gone) // after the close has started: Done waiters may then wait for it
	})
}

// finish asks the writer to write what is queued, then stop.
func (h *Host) finish() { h.flushOnce.Do(func() { close(h.flush) }) }

// writeLoop drains the queue in batches until the host is gone or finish
// was called and the queue is empty. Once WriteMessages has returned, the
// batch's blocks are released (the Conn keeps nothing of what it wrote).
func (h *Host) writeLoop() {
	defer close(h.wdone)
	batch := hostBatch{msgs: make([][]byte, 0, 64)}
	for {
		select {
		case hb := <-h.queue:
			h.wmu.Lock()
			batch.msgs, batch.n, batch.bytes = batch.msgs[:0], 0, 0
			h.takeCarry(&batch)
			batch.take(hb)
			h.drain(&batch)
			err := h.conn.WriteMessages(batch.msgs)
			batch.release()
			if err != nil {
				h.wmu.Unlock()
				h.disconnect(err)
				return
			}
			h.written(&batch)
			h.wmu.Unlock()
			clear(batch.msgs)
		case <-h.gone:
			return
		case <-h.flush:
			for {
				h.wmu.Lock()
				batch.msgs, batch.n, batch.bytes = batch.msgs[:0], 0, 0
				h.takeCarry(&batch)
				h.drain(&batch)
				if len(batch.msgs) == 0 {
					h.wmu.Unlock()
					return
				}
				err := h.conn.WriteMessages(batch.msgs)
				batch.release()
				h.wmu.Unlock()
				if err != nil {
					h.disconnect(err)
					return
				}
			}
		}
	}
}

// drain moves what else is queued into batch, up to about 1024 messages.
func (h *Host) drain(batch *hostBatch) {
	for batch.n < 1024 {
		select {
		case hb := <-h.queue:
			batch.take(hb)
		default:
			return
		}
	}
}

// take moves the messages and block holds of hb, a queued batch, to the
// end of batch (the writer's), and recycles hb's slice.
func (batch *hostBatch) take(hb hostBatch) {
	hb.count()
	batch.count()
	batch.msgs = append(batch.msgs, hb.msgs...)
	batch.blocks = append(batch.blocks, hb.blocks...)
	batch.n += hb.n
	batch.bytes += hb.bytes
	recycleMsgs(hb.msgs)
}

// mintID returns a fresh id for an agent → host request, as raw JSON, and
// its map key.
func (h *Host) mintID() ([]byte, string) {
	n := h.nextID.Add(1)
	return strconv.AppendInt(nil, n, 10), "n" + strconv.FormatInt(n, 10)
}

// minted reports whether key (an id's map key, acp.IDKey) is one of the
// ids mintID has given out: a request acpmux sent this host.
func (h *Host) minted(key string) bool {
	s, ok := strings.CutPrefix(key, "n")
	n, err := strconv.ParseInt(s, 10, 64)
	return ok && err == nil && n >= 1 && n <= h.nextID.Load()
}

// sendRequest sends request msg (envelope env) to the host under a fresh id
// of the host's, remembering the agent's id (or the decision) to map the
// host's response back. It reports false when the host is gone.
func (h *Host) sendRequest(msg []byte, env acp.Envelope, agentID []byte, decision string) bool {
	hid, hkey := h.mintID()
	h.mu.Lock()
	h.outgoing[hkey] = &outCall{agentID: agentID, method: env.Method, decision: decision}
	h.mu.Unlock()
	if h.send(acp.WithID(msg, env.ID, hid)) {
		return true
	}
	h.mu.Lock()
	delete(h.outgoing, hkey)
	h.mu.Unlock()
	return false
}

// present sends decision's request (method session/request_permission or
// elicitation/create) with params to the host.
func (h *Host) present(decision, method string, params []byte) bool {
	mb, _ := json.Marshal(method)
	m := []byte(`{"jsonrpc":"2.0","id":0,"method":` + string(mb) + `,"params":` + string(params) + `}`)
	env, err := acp.Parse(m)
	if err != nil {
		return false
	}
	return h.sendRequest(m, env, nil, decision)
}

// withdraw cancels the host's copy of decision with $/cancel_request (if it
// still holds one) and then sends notice, the _acpmux/permission_resolved
// notification (if not nil).
func (h *Host) withdraw(decision string, notice []byte) {
	h.mu.Lock()
	var hid string
	for k, oc := range h.outgoing {
		if oc.decision == decision {
			hid = k
			delete(h.outgoing, k)
		}
	}
	h.mu.Unlock()
	if hid != "" {
		h.send(notification(acp.MethodCancelRequest, `{"requestId":`+idFromKey(hid)+`}`))
	}
	if notice != nil {
		h.send(notice)
	}
}
