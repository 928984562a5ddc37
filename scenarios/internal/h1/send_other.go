//go:build !unix

package h1

import (
	"net"
	"syscall"
)

// rawConn is nil here: requests are written with Write, then read.
func rawConn(net.Conn) syscall.RawConn { return nil }

// rawIO is writeRead's state, on unix.
type rawIO struct{}

func (pc *pconn) writeRead(b, p []byte) (int, error) { panic("unreachable: no raw connection") }
