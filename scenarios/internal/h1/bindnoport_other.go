//go:build !linux

package h1

import "syscall"

// bindNoPort: IP_BIND_ADDRESS_NO_PORT is Linux's; elsewhere a source
// address's dial binds as it always did.
var bindNoPort func(network, address string, c syscall.RawConn) error
