//go:build !unix

package policy

// openNonblock is 0 where os.OpenFile has no O_NONBLOCK.
const openNonblock = 0
