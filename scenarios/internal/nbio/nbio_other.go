//go:build unix && !linux

package nbio

import "syscall"

// Write, Read and Peek are plain system calls here: the raw ones are
// nbio_linux.go's.
func Write(fd int, b []byte) (int, error) { return syscall.Write(fd, b) }
func Read(fd int, p []byte) (int, error)  { return syscall.Read(fd, p) }

func Peek(fd int) (int, error) {
	var b [1]byte
	n, _, err := syscall.Recvfrom(fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n, err
}
