//go:build !linux

package mcptest

import (
	"errors"
	"net"
)

// listenReusePort: helpers share a port on Linux only (the benchmarks
// that start several are Linux's).
func listenReusePort(string) (net.Listener, error) {
	return nil, errors.New("SO_REUSEPORT helpers are Linux's")
}
