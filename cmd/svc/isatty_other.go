//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import "os"

// isatty falls back to "a character device" where the terminal ioctl is not known.
func isatty(fd uintptr) bool {
	st, err := os.NewFile(fd, "").Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
