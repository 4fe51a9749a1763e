package bridge

// maxIovecs is how many pieces one writev takes (Linux's IOV_MAX).
const maxIovecs = 1024

var newline = []byte{'\n'}

// canWriteNow reports whether writeNow may be tried: the conn writes to
// a pipe in non-blocking mode.
func (c *ndjsonConn) canWriteNow() bool { return c.rc != nil }

// writeNow writes msgs, each followed by "\n", with as few writev system
// calls as the pieces allow, without waiting: it stops when the pipe is
// full. It returns how many of msgs it wrote whole (k) and, when k <
// len(msgs), the part of msgs[k] still to write, without its "\n" (empty
// when only the "\n" is left). A message whose "\n" follows it in its
// capacity (joined lines, hostBatch) is one piece with it. Called by one
// goroutine at a time (the host's wmu), never with WriteMessages.
func (c *ndjsonConn) writeNow(msgs [][]byte) (k int, rest []byte, err error) {
	for k < len(msgs) {
		iov := c.iov[:0]
		j := k
		for ; j < len(msgs) && len(iov)+2 <= maxIovecs; j++ {
			m := msgs[j]
			if n := len(m); cap(m) > n && m[:n+1][n] == '\n' {
				iov = append(iov, iovec(m[:n+1]))
				continue
			}
			if len(m) > 0 {
				iov = append(iov, iovec(m))
			}
			iov = append(iov, iovec(newline))
		}
		c.iov = iov[:0]
		n, err := writevNow(c.rc, iov)
		if err != nil {
			return k, nil, err
		}
		c.sent.Add(int64(n))
		for ; k < j; k++ {
			m := msgs[k]
			if n < len(m)+1 {
				return k, m[min(n, len(m)):], nil
			}
			n -= len(m) + 1
		}
	}
	return k, nil, nil
}
