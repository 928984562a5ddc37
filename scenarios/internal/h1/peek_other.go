//go:build !unix

package h1

import "net"

// peerClosed cannot look at a socket here: a request written on a
// connection the server closed while idle fails (it is not sent again).
func peerClosed(net.Conn) bool { return false }
