package bridge

// compactRatio bounds the memory a queued batch pins: when the blocks it
// retains hold more than compactRatio times its bytes, its messages are
// copied out and the blocks released (hostBatch.compact).
const compactRatio = 4

// compact copies hb's messages into one buffer of their own and releases
// hb's holds on its blocks when the blocks are mostly other lines: their
// size is more than compactRatio times hb's bytes (newlines included). A
// host that gets few lines of each block (a session that is quiet while
// another floods) and writes slowly would otherwise keep a whole block
// for each message it has queued. A dense batch (many lines of each
// block, a flood) is left as it is, written from the blocks.
//
// Each entry keeps a "\n" just past its length within its capacity, as
// joined lines do; with join (a host that writes NDJSON itself,
// joinsLines) the entries become one, the newlines between them, so the
// writer writes the batch in one piece. n and bytes do not change.
func (hb *hostBatch) compact(join bool) {
	if len(hb.blocks) == 0 {
		return
	}
	hb.count()
	size := hb.bytes + hb.n // every message and its "\n", joined or not
	pinned := 0
	for _, blk := range hb.blocks {
		pinned += cap(blk.buf)
	}
	if compactRatio*size >= pinned {
		return
	}
	buf := make([]byte, 0, size)
	for i, m := range hb.msgs {
		start := len(buf)
		buf = append(buf, m...)
		buf = append(buf, '\n')
		hb.msgs[i] = buf[start : len(buf)-1 : len(buf)]
	}
	if join {
		hb.msgs[0] = buf[: len(buf)-1 : len(buf)]
		clear(hb.msgs[1:])
		hb.msgs = hb.msgs[:1]
	}
	hb.runEnd = 0
	hb.release()
}
