package main

// ideQueueLen bounds the writer queue of a blocking host (the IDE on
// stdio, the stream-json script, the demo's terminal), in messages.
//
// A blocking host is never disconnected: when its queue is full the
// agent waits, as it would on a direct pipe. A deeper queue only holds
// more of the agent's output in acpmux's memory (every queued line keeps
// its 64 KiB read block alive) without making the relay faster: the
// host's writer hands whole blocks to one write, the IDE's pipe buffers
// as well, and two batches of the agent reader (maxPending, 512) keep the
// writer busy. Measured on the 200,000-update flood (docs/performance.md):
// 4096 messages held about 0.8 MB more at the peak than 1024.
const ideQueueLen = 1024

// blockingQueueLen is the queue length of a blocking host given
// --host-queue n, which bounds the queue of every remote host: n when it
// is smaller, else ideQueueLen.
func blockingQueueLen(n int) int { return min(n, ideQueueLen) }
