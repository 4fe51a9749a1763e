// Package waitfile waits for a file (a log another process appends to) to
// hold some text, for tests: the file is watched (inotify on Linux), not
// polled with sleeps.
package waitfile

import (
	"bytes"
	"fmt"
	"os"
	"time"
)

// Until returns the contents of the file at path once ok(contents) holds,
// or the contents and an error after timeout. The file need not exist yet.
func Until(path string, timeout time.Duration, ok func(data []byte) bool) ([]byte, error) {
	w, err := watch(path)
	if err != nil {
		return nil, err
	}
	defer w.close()
	deadline := time.Now().Add(timeout)
	for {
		data, _ := os.ReadFile(path)
		if ok(data) {
			return data, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return data, fmt.Errorf("waitfile: %s: not there after %v", path, timeout)
		}
		if err := w.wait(left); err != nil {
			return data, err
		}
	}
}

// Contains returns the contents of the file at path once they contain
// text, or an error after timeout.
func Contains(path, text string, timeout time.Duration) ([]byte, error) {
	return Until(path, timeout, func(data []byte) bool { return bytes.Contains(data, []byte(text)) })
}
