//go:build unix

package workers

import "syscall"

// openFileLimit is this process's open-file limit (getrlimit), which the
// Go runtime raised to the hard limit at start, as it will in a worker.
func openFileLimit() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	return r.Cur, nil
}
