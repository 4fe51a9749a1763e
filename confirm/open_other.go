//go:build !unix

package confirm

// openNonblock is 0 where os.OpenFile has no O_NONBLOCK.
const openNonblock = 0
