//go:build !linux

package waitfile

import "time"

// watcher stands in for a file watch where there is no inotify: it waits
// a short while and the caller looks again.
type watcher struct{}

func watch(string) (*watcher, error) { return &watcher{}, nil }

func (w *watcher) wait(d time.Duration) error {
	<-time.After(min(d, 10*time.Millisecond))
	return nil
}

func (w *watcher) close() {}
