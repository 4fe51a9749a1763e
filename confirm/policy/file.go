package policy

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileBytes is the largest policy file Load reads: 1 MiB.
const MaxFileBytes = 1 << 20

// readPolicyFile returns the content of path, which must be a regular file
// of at most MaxFileBytes. Nothing else is ever read, and nothing here
// waits: the path is checked with stat before it is opened (so a device is
// not even opened), opened with O_NONBLOCK (a FIFO with no writer would
// otherwise block open until one appears, and with it the signals that
// wait for start or reload to end) and checked again with fstat on the
// open file, in case it was replaced in between.
func readPolicyFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkPolicyFile(path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkPolicyFile(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than the limit of %d bytes (1 MiB)", path, MaxFileBytes)
	}
	return data, nil
}

// checkPolicyFile refuses anything but a regular file of at most
// MaxFileBytes.
func checkPolicyFile(path string, fi fs.FileInfo) error {
	m := fi.Mode()
	if !m.IsRegular() {
		what := "not a regular file"
		switch {
		case m&fs.ModeNamedPipe != 0:
			what = "a FIFO"
		case m.IsDir():
			what = "a directory"
		case m&fs.ModeDevice != 0:
			what = "a device"
		case m&fs.ModeSocket != 0:
			what = "a socket"
		}
		return fmt.Errorf("%s is %s: the policy must be a regular file", path, what)
	}
	if fi.Size() > MaxFileBytes {
		return fmt.Errorf("%s: %d bytes, larger than the limit of %d bytes (1 MiB)", path, fi.Size(), MaxFileBytes)
	}
	return nil
}
