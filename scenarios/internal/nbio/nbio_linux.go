//go:build linux && !race

package nbio

import (
	"syscall"
	"unsafe"
)

// Write writes b to the non-blocking socket fd.
func Write(fd int, b []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, b) }

// Read reads the non-blocking socket fd into p.
func Read(fd int, p []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, p) }

// rawIO is write(2) or read(2) (trap) of b on fd, unannounced.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// Peek looks at the next byte of socket fd without taking it or
// waiting (recv with MSG_PEEK|MSG_DONTWAIT).
func Peek(fd int) (int, error) {
	var b [1]byte
	n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}
