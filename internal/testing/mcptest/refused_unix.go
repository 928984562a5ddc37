//go:build unix

package mcptest

import (
	"fmt"
	"syscall"
	"testing"
)

// RefusedAddr is a loopback address ("127.0.0.1:PORT") that refuses
// connections for as long as the test lasts: a TCP socket bound to the
// port without listen(2), so that a connect gets a reset, and no other
// socket (a listener, or a connect's own source port) can take the port
// while it is bound. Closing a listener to get a free port, as tests here
// once did, hands the port to the next listener that asks for one — the
// same test's next server, or another package's — and the "refused"
// target then hung or answered (TestBadTargets failed so in CI).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("a socket for a refused address: %v", err)
	}
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind a refused address: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("the refused address's port: %v", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("the refused address is %T, want IPv4", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port)
}
