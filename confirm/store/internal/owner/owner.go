// Package owner makes and judges the owner tags the stores write on each
// decision row: "host/pid/instance", which process (and which store
// instance in it) opened the decision, so that a store opening cancels only
// the rows whose process is gone.
package owner

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// live holds the owner tags of the stores open in this process.
var live = set{m: make(map[string]bool)}

type set struct {
	mu sync.Mutex // guards m
	m  map[string]bool
}

// Add marks tag as a store open in this process.
func Add(tag string) {
	live.mu.Lock()
	defer live.mu.Unlock()
	live.m[tag] = true
}

// Remove marks tag's store as closed.
func Remove(tag string) {
	live.mu.Lock()
	defer live.mu.Unlock()
	delete(live.m, tag)
}

func has(tag string) bool {
	live.mu.Lock()
	defer live.mu.Unlock()
	return live.m[tag]
}

// Hostname returns this machine's host name with "/" replaced by "_", or
// "unknown".
func Hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return strings.ReplaceAll(h, "/", "_")
}

// New returns a fresh owner tag for a store instance of this process.
func New() string {
	var r [8]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%s/%d/%s", Hostname(), os.Getpid(), hex.EncodeToString(r[:]))
}

// Alive reports whether the process behind tag may still answer its
// decisions: a store of this process that is still open ([Add], not
// [Remove]d), or another running process of this host. Rows of another
// host are assumed alive (their deadline still bounds them); a malformed
// tag is dead.
func Alive(tag string) bool {
	parts := strings.Split(tag, "/")
	if len(parts) != 3 {
		return false
	}
	if parts[0] != Hostname() {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	if pid == os.Getpid() {
		return has(tag)
	}
	return processAlive(pid)
}
