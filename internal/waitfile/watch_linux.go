package waitfile

import (
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// watcher is an inotify watch on the directory of one file.
type watcher struct{ fd int }

func watch(path string) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	// The directory: the file may not exist yet, or be replaced.
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &watcher{fd: fd}, nil
}

// wait returns after an event in the directory, or after d.
func (w *watcher) wait(d time.Duration) error {
	ms := int(d.Milliseconds()) + 1
	_, err := unix.Poll([]unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}, ms)
	if err == unix.EINTR {
		return nil
	}
	if err != nil {
		return err
	}
	var buf [4096]byte
	for {
		if n, err := unix.Read(w.fd, buf[:]); n <= 0 || err != nil {
			return nil // drained
		}
	}
}

func (w *watcher) close() { unix.Close(w.fd) }
