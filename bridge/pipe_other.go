//go:build !linux

package bridge

import "os"

func growPipe(*os.File) {}

// GrowPipe does nothing outside Linux.
func GrowPipe(*os.File) {}
