//go:build unix

package h1

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"

	"github.com/leakbench/leakbench/scenarios/internal/nbio"
)

// peerClosed reports whether the server has closed (or written to) an idle
// connection, without blocking: one recv(MSG_PEEK|MSG_DONTWAIT). A TLS
// connection is looked at under its records: on an idle one, any byte is
// a close_notify, or something as unexpected.
func peerClosed(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false // a request written on it is then not sent again
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	_ = rc.Read(func(fd uintptr) bool {
		n, err := nbio.Peek(int(fd))
		closed = n > 0 || (err == nil && n == 0) || (err != nil && !errors.Is(err, syscall.EAGAIN))
		return true
	})
	return closed
}
