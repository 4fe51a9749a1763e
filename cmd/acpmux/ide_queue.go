package main

// ideQueueLen bounds the writer queue of a blocking host (the IDE on
// stdio, the stream-json script, the demo's terminal), in messages.
//
// A blocking host is never disconnected: when its queue is full the
// agent waits, as it would on a direct pipe. A deeper queue only holds
// more of the agent's output in acpmux's memory (every queued line keeps
// its read block, 256 KiB, alive) without making the relay faster: the
// agent reader writes to the IDE's pipe itself while the writer is idle,
// the host's writer hands whole blocks to one write, the IDE's pipe (1 MiB)
// buffers as well, and one batch of the agent reader (maxPending, 1024
// messages) keeps the writer busy. Measured on the 200,000-update flood
// (docs/performance.md), with 64 KiB blocks and batches of 512: 4096
// messages held about 0.8 MB more at the peak than 1024.
const ideQueueLen = 1024

// blockingQueueLen is the queue length of a blocking host given
// --host-queue n, which bounds the queue of every remote host: n when it
// is smaller, else ideQueueLen.
func blockingQueueLen(n int) int { return min(n, ideQueueLen) }
