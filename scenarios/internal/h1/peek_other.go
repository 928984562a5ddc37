//go:build !unix

package h1

import "net"

// peerClosed cannot look at a socket here; the retry in roundTrip covers a
// connection the server closed.
func peerClosed(net.Conn) bool { return false }
