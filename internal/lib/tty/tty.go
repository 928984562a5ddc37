// Package tty tells whether output goes to a terminal, where progress
// lines are redrawn in place rather than appended.
package tty

import (
	"io"
	"os"
)

// Is reports whether w is a terminal (an *os.File that isatty says is one).
func Is(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && isatty(f)
}
