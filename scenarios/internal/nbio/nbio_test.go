//go:build unix

package nbio

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// socketPair returns the raw descriptor of a loopback TCP connection's
// client end (non-blocking, as Go's netpoller keeps it) and its server end.
func socketPair(t *testing.T) (syscall.RawConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return rc, s
}

// do runs f on the client's descriptor until it stops asking to wait.
func do(t *testing.T, rc syscall.RawConn, f func(fd int) bool) {
	t.Helper()
	if err := rc.Read(func(fd uintptr) bool { return f(int(fd)) }); err != nil {
		t.Fatal(err)
	}
}

func TestWritePeekRead(t *testing.T) {
	rc, s := socketPair(t)
	do(t, rc, func(fd int) bool {
		if n, err := Read(fd, make([]byte, 8)); !errors.Is(err, syscall.EAGAIN) {
			t.Errorf("Read of an empty socket = %d, %v; want EAGAIN (it must not block)", n, err)
		}
		if n, err := Peek(fd); !errors.Is(err, syscall.EAGAIN) {
			t.Errorf("Peek of an empty socket = %d, %v; want EAGAIN", n, err)
		}
		if n, err := Write(fd, []byte("ping")); n != 4 || err != nil {
			t.Errorf("Write = %d, %v; want 4, nil", n, err)
		}
		return true
	})
	got := make([]byte, 4)
	if _, err := s.Read(got); err != nil || string(got) != "ping" {
		t.Fatalf("the server read %q, %v; want ping", got, err)
	}
	if _, err := s.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	var peeked, read int
	buf := make([]byte, 8)
	do(t, rc, func(fd int) bool {
		n, err := Peek(fd)
		if errors.Is(err, syscall.EAGAIN) {
			return false // the answer is on its way: wait in the netpoller
		}
		peeked = n
		read, err = Read(fd, buf)
		if err != nil {
			t.Errorf("Read after Peek: %v", err)
		}
		return true
	})
	if peeked != 1 || string(buf[:read]) != "pong" {
		t.Fatalf("Peek saw %d bytes, then Read %q; want 1, then all of pong (the peek takes nothing)", peeked, buf[:read])
	}
}

func TestPeekSeesTheServerClose(t *testing.T) {
	rc, s := socketPair(t)
	s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		var err error
		do(t, rc, func(fd int) bool { n, err = Peek(fd); return true })
		if err == nil && n == 0 {
			return // end of stream: the close is seen without reading
		}
		if !errors.Is(err, syscall.EAGAIN) || time.Now().After(deadline) {
			t.Fatalf("Peek after the server closed = %d, %v; want 0, nil", n, err)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEmptyBuffers(t *testing.T) {
	rc, _ := socketPair(t)
	do(t, rc, func(fd int) bool {
		if n, err := Write(fd, nil); n != 0 || err != nil {
			t.Errorf("Write(nil) = %d, %v; want 0, nil", n, err)
		}
		if n, err := Read(fd, nil); n != 0 || err != nil {
			t.Errorf("Read(nil) = %d, %v; want 0, nil", n, err)
		}
		return true
	})
}
