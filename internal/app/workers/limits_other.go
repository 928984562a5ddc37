//go:build !unix

package workers

// openFileLimit: where there is no getrlimit, a limit no plan of the
// engine's size reaches.
func openFileLimit() (uint64, error) { return 1 << 20, nil }
