//go:build unix && (!linux || race)

package nbio

import "syscall"

// Write, Read and Peek are plain system calls here: the raw ones are
// nbio_linux.go's. Under the race detector they are plain on Linux too:
// package syscall tells the detector that a read follows the write it
// answers (its ioSync annotations), which raw calls skip — a server
// handler's write seen by the client after the answer would then be
// reported as a race it is not.
func Write(fd int, b []byte) (int, error) { return syscall.Write(fd, b) }
func Read(fd int, p []byte) (int, error)  { return syscall.Read(fd, p) }

func Peek(fd int) (int, error) {
	var b [1]byte
	n, _, err := syscall.Recvfrom(fd, b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n, err
}
