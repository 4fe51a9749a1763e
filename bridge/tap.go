package bridge

// Direction says which way a message passed the bridge, for a [Tap].
type Direction string

// The directions of a tapped message.
const (
	FromHost  Direction = "from_host"  // read from a host
	ToHost    Direction = "to_host"    // written to a host
	FromAgent Direction = "from_agent" // read from the agent's stdout
	ToAgent   Direction = "to_agent"   // written to the agent's stdin
)

// AgentTapID is the host argument of a [Tap] for messages of the agent.
const AgentTapID = "agent"

// Tap is given a copy of every message the bridge reads from or writes to
// a connection: host is the host's ID, or [AgentTapID]. Message is called
// on the reading or writing goroutine, right after the read or the
// successful write (before the write for a [SyncTap]), in that
// connection's order; it must not block, keep
// msg or change it (it copies what it keeps). Messages the agent wrote that
// are not JSON are given too. A bridge without a Tap wraps nothing: it
// costs nothing when not enabled.
type Tap interface {
	Message(dir Direction, host string, msg []byte)
}

// SyncTap is a Tap that keeps what it is given (a transcript). A message
// the bridge writes to a connection is given to it before the write, then
// Sync is called: it returns when every message given so far is safe from
// the end of the process (or when it gives up, after a bound of its own).
// So a host that kills acpmux as soon as it has read an answer cannot
// leave that answer out of the transcript.
type SyncTap interface {
	Tap
	Sync()
}

// tapConn is a Conn whose messages are also given to a Tap.
type tapConn struct {
	Conn
	tap     Tap
	host    string
	in, out Direction
}

func newTapConn(c Conn, tap Tap, host string, in, out Direction) *tapConn {
	return &tapConn{Conn: c, tap: tap, host: host, in: in, out: out}
}

// ReadMessage reads from the wrapped Conn and taps the message.
func (c *tapConn) ReadMessage() ([]byte, error) {
	m, err := c.Conn.ReadMessage()
	if err == nil {
		c.tap.Message(c.in, c.host, m)
	}
	return m, err
}

// WriteMessages writes to the wrapped Conn and taps each message: after
// the write for a plain Tap, before it (then Sync) for a [SyncTap].
func (c *tapConn) WriteMessages(msgs [][]byte) error {
	if st, ok := c.tap.(SyncTap); ok {
		for _, m := range msgs {
			st.Message(c.out, c.host, m)
		}
		st.Sync()
		return c.Conn.WriteMessages(msgs)
	}
	err := c.Conn.WriteMessages(msgs)
	if err == nil {
		for _, m := range msgs {
			c.tap.Message(c.out, c.host, m)
		}
	}
	return err
}

// CloseWithCause closes the wrapped Conn with cause when it can say why
// (a WebSocket), else closes it.
func (c *tapConn) CloseWithCause(cause error) error {
	if cc, ok := c.Conn.(interface{ CloseWithCause(error) error }); ok {
		return cc.CloseWithCause(cause)
	}
	return c.Conn.Close()
}

// readShared lends the wrapped Conn's next line when it can ([sharedReader])
// and taps it; otherwise it reads a message the caller owns (blk nil). The
// Tap copies what it keeps, so a lent line may be tapped.
func (c *tapConn) readShared() ([]byte, *lineBlock, error) {
	sr, ok := c.Conn.(sharedReader)
	if !ok {
		m, err := c.ReadMessage()
		return m, nil, err
	}
	m, blk, err := sr.readShared()
	if err == nil {
		c.tap.Message(c.in, c.host, m)
	}
	return m, blk, err
}

// lentAt is the wrapped Conn's ([sharedReader]), or -1.
func (c *tapConn) lentAt(msg []byte) int {
	if sr, ok := c.Conn.(sharedReader); ok {
		return sr.lentAt(msg)
	}
	return -1
}
