//go:build linux

package tty

import (
	"os"

	"golang.org/x/sys/unix"
)

// isatty reports whether f is a terminal.
func isatty(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	// Control, unlike Fd, leaves the file in non-blocking mode.
	_ = rc.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		tty = err == nil
	})
	return tty
}
