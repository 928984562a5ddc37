//go:build unix

package mcptest

import (
	"syscall"
	"testing"
)

// RaiseOpenFiles raises this process's soft limit on open files to its
// hard one, for tests and benchmarks that hold thousands of connections
// (a helper started after it inherits the limit: its side of each).
func RaiseOpenFiles(tb testing.TB) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			tb.Logf("raise the open-file limit: %v", err)
		}
	}
}
