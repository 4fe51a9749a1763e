//go:build !unix

package owner

// processAlive cannot tell on this system; rows of other processes are then
// cancelled only once their deadline passed.
func processAlive(pid int) bool { return true }
