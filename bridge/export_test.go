package bridge

// BlocksMade returns how many line blocks the agent readers' pool has made
// so far (blocks taken again from the pool are not counted).
func BlocksMade() int64 { return blocksMade.Load() }

// BlockBytes is the size of a line block.
const BlockBytes = blockBytes
