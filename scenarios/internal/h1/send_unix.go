//go:build unix

package h1

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/leakbench/leakbench/scenarios/internal/nbio"
)

// rawConn returns the socket of a plain TCP connection, for writeRead
// (nil for TLS: its records are not the bytes on the wire).
func rawConn(c net.Conn) syscall.RawConn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// rawIO is writeRead's state, in the connection so that the callback
// (a method value made once per connection) allocates nothing per request.
type rawIO struct {
	b, p        []byte
	n, sent     int // bytes read; bytes of the request written
	werr, rerr  error
	wrote, full bool
	step        func(fd uintptr) bool
}

// writeRead writes the request b and reads the first bytes of its answer
// into p within one wait on the socket: the runtime's poller is armed for
// reading before the write, so that the read waits for the answer at once
// instead of trying first. Through net.Conn, the read right after a write
// finds nothing yet (the server has not answered) and costs a syscall
// before the wait, on every request: about a twentieth of the engine's
// CPU per request on loopback. The connection's deadline and its closing
// under the request (an abort) end the wait as they end a Read.
func (pc *pconn) writeRead(b, p []byte) (int, error) {
	r := &pc.rio
	if r.step == nil {
		r.step = pc.rawStep
	}
	r.b, r.p, r.n, r.sent, r.werr, r.rerr, r.wrote, r.full = b, p, 0, 0, nil, nil, false, false
	err := pc.raw.Read(r.step)
	b, n, werr, rerr := r.b, r.n, r.werr, r.rerr
	r.b, r.p = nil, nil
	switch {
	case err != nil: // closed under the request, or the deadline passed
		if oe := (*net.OpError)(nil); errors.As(err, &oe) {
			oe.Op = "read" // not "raw-read": the error reads as Read's would
		}
		return 0, err
	case werr != nil && r.sent == 0:
		return 0, &nothingWrittenError{pc.opError("write", werr)}
	case werr != nil:
		return 0, pc.opError("write", werr)
	case r.full:
		if m, err := pc.c.Write(b); err != nil {
			if r.sent+m == 0 {
				err = &nothingWrittenError{err}
			}
			return 0, err
		}
		return pc.c.Read(p)
	case rerr != nil:
		return 0, pc.opError("read", rerr)
	case n <= 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawStep is writeRead's callback: the write first, then the read once
// the socket is readable. It returns false to wait.
func (pc *pconn) rawStep(fd uintptr) bool {
	r := &pc.rio
	if !r.wrote {
		r.wrote = true
		for len(r.b) > 0 {
			m, e := nbio.Write(int(fd), r.b)
			if m > 0 {
				r.b = r.b[m:]
				r.sent += m
			}
			switch {
			case e == syscall.EINTR:
			case e == syscall.EAGAIN:
				r.full = true // the socket's buffer is full: the rest by Write
				return true
			case e != nil:
				r.werr = e
				return true
			}
		}
		return false // sent: wait for the answer
	}
	for {
		r.n, r.rerr = nbio.Read(int(fd), r.p)
		if r.rerr != syscall.EINTR {
			return r.rerr != syscall.EAGAIN
		}
	}
}

// opError wraps a syscall's error as net.Conn's Read and Write do.
func (pc *pconn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: pc.c.LocalAddr(), Addr: pc.c.RemoteAddr(), Err: os.NewSyscallError(op, err)}
}
