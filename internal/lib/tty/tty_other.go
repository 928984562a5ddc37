//go:build !linux

package tty

import "os"

// isatty reports whether f is a character device: a good enough guess at
// a terminal where termios is not at hand.
func isatty(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
