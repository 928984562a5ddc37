//go:build !unix

package mcptest

import (
	"net"
	"testing"
)

// RefusedAddr is a loopback address nothing listened on a moment ago.
// Without a way to bind a port without listening (refused_unix.go), the
// port is free again, and another listener may take it before the test
// connects.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
