package sqlite

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A store owner tag is "host/pid/instance": which process opened a decision
// row, so that OpenStore cancels only rows whose process is gone.

// liveOwners holds the owner tags of the stores open in this process.
var liveOwners = ownerSet{m: make(map[string]bool)}

type ownerSet struct {
	mu sync.Mutex // guards m
	m  map[string]bool
}

func (o *ownerSet) add(tag string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.m[tag] = true
}

func (o *ownerSet) remove(tag string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, tag)
}

func (o *ownerSet) has(tag string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[tag]
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return strings.ReplaceAll(h, "/", "_")
}

// newOwner returns a fresh owner tag for this process.
func newOwner() string {
	var r [8]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return fmt.Sprintf("%s/%d/%s", hostname(), os.Getpid(), hex.EncodeToString(r[:]))
}

// ownerAlive reports whether the process behind tag may still answer its
// decisions. Rows of another host are assumed alive (their deadline still
// bounds them); a malformed tag is dead.
func ownerAlive(tag string) bool {
	parts := strings.Split(tag, "/")
	if len(parts) != 3 {
		return false
	}
	if parts[0] != hostname() {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false
	}
	if pid == os.Getpid() {
		return liveOwners.has(tag)
	}
	return processAlive(pid)
}
