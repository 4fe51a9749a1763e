package bridge

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// RecordEntry is one line of a transcript written by a [Recorder]
// (acpmux run --record FILE; docs/record.md): a message with when, which
// way and through which host it passed. Msg is the message with its
// secrets redacted ([Redact]); a line that is not JSON is in Text instead.
// An entry with Dir "dropped" says Dropped messages were not recorded
// because the disk was slower than the relay. JSON in camelCase, one entry
// per line (NDJSON).
type RecordEntry struct {
	Time    time.Time       `json:"time"`
	Dir     Direction       `json:"dir"`
	Host    string          `json:"host"`
	Msg     json.RawMessage `json:"msg,omitempty"`
	Text    string          `json:"text,omitempty"`
	Dropped int64           `json:"dropped,omitempty"`
}

// DirDropped is the Dir of a [RecordEntry] that counts messages not
// recorded.
const DirDropped Direction = "dropped"

// DefaultRecordQueueLen is how many messages a [Recorder] holds for its
// writer before it drops new ones.
const DefaultRecordQueueLen = 8192

// RecorderOptions configure a [Recorder]. The zero value is usable.
type RecorderOptions struct {
	// QueueLen bounds the messages waiting to be written
	// (DefaultRecordQueueLen when 0 or less).
	QueueLen int
	// Secrets are strings replaced by "[redacted]" wherever they appear
	// (the bearer token, token file contents); see also AddSecret.
	Secrets []string
	// Logger receives a line when messages are dropped or the write
	// fails; nil discards it.
	Logger *slog.Logger
	// IsToken, when not nil, reports whether a token-shaped substring of
	// a string or member name ([TokenLen] hex digits, given in lowercase)
	// is a bearer token, to be replaced by [Redacted] (the per-person
	// tokens of acpmux token add, whose hashes alone are stored). It is
	// called on the writer's goroutine, never on the relay's.
	IsToken func(candidate string) bool
	// SyncWait bounds how long Sync waits for the writer
	// (DefaultRecordSyncWait when 0 or less).
	SyncWait time.Duration
}

// DefaultRecordSyncWait is how long [Recorder.Sync] waits for the file
// before it gives up (and stops waiting until the writer has caught up).
const DefaultRecordSyncWait = time.Second

type recordItem struct {
	at   time.Time
	dir  Direction
	host string
	msg  []byte
	seq  uint64 // 1, 2, ... in queue order
}

// Recorder is a [Tap] that writes every message, redacted, to a
// transcript. Message only copies the message into a bounded queue: a slow
// disk never makes the relay wait; what does not fit is dropped, counted,
// logged and noted in the transcript. Run writes the queue; Close stops
// it. A message about to be written to a connection is recorded before
// the write and the bridge calls Sync ([SyncTap]), so that a host that
// kills acpmux as soon as it has read an answer still finds that answer
// in the transcript. Safe for concurrent use.
type Recorder struct {
	w        *bufio.Writer
	q        chan recordItem
	log      *slog.Logger
	dropped  atomic.Int64
	stop     chan struct{}
	done     chan struct{}
	started  chan struct{}
	once     sync.Once
	runOnce  sync.Once
	syncWait time.Duration
	isToken  func(string) bool

	qmu    sync.Mutex // guards queued and the order of sends on q
	queued uint64     // seq of the last queued message

	pmu     sync.Mutex    // guards written and wake
	written uint64        // seq of the last message handed to the OS
	wake    chan struct{} // closed when written grows
	waiters atomic.Int32  // Syncs waiting: the writer flushes after each message
	lagging atomic.Bool   // a Sync gave up: the next ones do not wait until the writer caught up

	mu      sync.Mutex // guards secrets
	secrets []string
}

// NewRecorder returns a Recorder writing to w. It starts nothing: call
// Run.
func NewRecorder(w io.Writer, opts RecorderOptions) *Recorder {
	n := opts.QueueLen
	if n <= 0 {
		n = DefaultRecordQueueLen
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	wait := opts.SyncWait
	if wait <= 0 {
		wait = DefaultRecordSyncWait
	}
	r := &Recorder{w: bufio.NewWriterSize(w, 64<<10), q: make(chan recordItem, n), log: log,
		stop: make(chan struct{}), done: make(chan struct{}), started: make(chan struct{}),
		syncWait: wait, wake: make(chan struct{}), isToken: opts.IsToken}
	for _, s := range opts.Secrets {
		r.AddSecret(s)
	}
	return r
}

// AddSecret adds s (when it is not empty) to the strings redacted from
// the messages written after it.
func (r *Recorder) AddSecret(s string) {
	if s == "" {
		return
	}
	r.mu.Lock()
	r.secrets = append(r.secrets, s)
	r.mu.Unlock()
}

// Message implements [Tap]: it queues a copy of msg, or counts it as
// dropped when the queue is full.
func (r *Recorder) Message(dir Direction, host string, msg []byte) {
	it := recordItem{at: time.Now(), dir: dir, host: host, msg: append([]byte(nil), msg...)}
	r.qmu.Lock()
	defer r.qmu.Unlock()
	it.seq = r.queued + 1
	select {
	case r.q <- it:
		r.queued = it.seq
	default:
		if n := r.dropped.Add(1); n == 1 || n%1000 == 0 {
			r.log.Warn("record: the transcript file is slower than the relay; messages dropped", "dropped", n)
		}
	}
}

// Sync implements [SyncTap]: it returns when every message queued before
// it is written to the file (handed to the OS, so that it survives the
// end of the process, even by SIGKILL), when Run is not running, or after
// RecorderOptions.SyncWait. After a Sync that gave up, the next ones
// return at once until the writer has caught up: a slow disk delays the
// relay by at most SyncWait, then the transcript may lag again.
func (r *Recorder) Sync() {
	select {
	case <-r.started:
	default:
		return
	}
	if r.lagging.Load() {
		return
	}
	r.qmu.Lock()
	target := r.queued
	r.qmu.Unlock()
	r.waiters.Add(1)
	defer r.waiters.Add(-1)
	var timeout <-chan time.Time
	for {
		r.pmu.Lock()
		written, wake := r.written, r.wake
		r.pmu.Unlock()
		if written >= target {
			return
		}
		if timeout == nil {
			t := time.NewTimer(r.syncWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-r.done:
			return
		case <-timeout:
			r.lagging.Store(true)
			return
		}
	}
}

// handed notes that every message up to seq is written to the OS.
func (r *Recorder) handed(seq uint64) {
	r.pmu.Lock()
	if seq > r.written {
		r.written = seq
		close(r.wake)
		r.wake = make(chan struct{})
	}
	r.pmu.Unlock()
}

// Dropped returns how many messages were not recorded.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// Run writes queued messages until Close, then what is still queued, and
// returns the first write error (after which it only drains the queue).
func (r *Recorder) Run() error {
	r.runOnce.Do(func() { close(r.started) })
	defer close(r.done)
	var werr error
	var noted int64 // drops already written to the transcript
	write := func(it recordItem) {
		if werr != nil {
			return
		}
		if d := r.dropped.Load(); d > noted {
			werr = r.writeEntry(RecordEntry{Time: it.at.UTC(), Dir: DirDropped, Dropped: d - noted})
			noted = d
		}
		if werr == nil {
			werr = r.writeEntry(r.entry(it))
		}
		if werr != nil {
			r.log.Error("record: write the transcript", "err", werr)
		}
	}
	for {
		select {
		case it := <-r.q:
			write(it)
			if (len(r.q) == 0 || r.waiters.Load() > 0) && werr == nil {
				if werr = r.w.Flush(); werr == nil {
					r.handed(it.seq)
					if len(r.q) == 0 {
						r.lagging.Store(false)
					}
				}
			}
		case <-r.stop:
			for {
				select {
				case it := <-r.q:
					write(it)
				default:
					if d := r.dropped.Load(); d > noted && werr == nil {
						werr = r.writeEntry(RecordEntry{Time: time.Now().UTC(), Dir: DirDropped, Dropped: d - noted})
					}
					if werr == nil {
						werr = r.w.Flush()
					}
					return werr
				}
			}
		}
	}
}

// Close makes Run write what is queued and return (see Wait). Messages
// given after Close may not be recorded.
func (r *Recorder) Close() {
	r.once.Do(func() { close(r.stop) })
}

// Wait returns when Run has returned.
func (r *Recorder) Wait() { <-r.done }

func (r *Recorder) entry(it recordItem) RecordEntry {
	r.mu.Lock()
	secrets := r.secrets
	r.mu.Unlock()
	e := RecordEntry{Time: it.at.UTC(), Dir: it.dir, Host: it.host}
	rd := redactor{secrets: secrets, isToken: r.isToken}
	if msg, ok := rd.redact(it.msg); ok {
		e.Msg = msg
	} else {
		e.Text = rd.string(string(it.msg))
	}
	return e
}

func (r *Recorder) writeEntry(e RecordEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := r.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return nil
}
