package h1

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// bindNoPort is the Control of a dialer with a source address: it sets
// IP_BIND_ADDRESS_NO_PORT, so that the bind(2) before connect(2) takes
// the address alone and the port is chosen at connect time, unique for
// the four-tuple (the kernel's fast connect path). Without it, bind
// picks a port no other socket of that address holds, searching the
// bound ports: with thousands of connections per source address each
// dial's search grows, and at ~16,000 per address (issue #43's moonshot)
// the ramp spent the machine's CPU in the kernel and its server/discover
// requests timed out. It also lets one source port serve several targets.
// A kernel without it (before 4.2) refuses the option: the dial goes on
// as before.
func bindNoPort(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	})
}
