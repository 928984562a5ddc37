package h1

import "net"

// What the external tests (package h1_test) need of the internals.

// PeekAfterIdle is how long a connection sits idle before it is looked at
// (peerClosed) on its next use.
const PeekAfterIdle = peekAfterIdle

// ShutWrite shuts the slot's connection for writing, as a socket the
// kernel already knows is broken: the next write on it fails at once,
// writing nothing, while a look at it finds it open.
func ShutWrite(s *Slot) error { return s.pc.c.(*net.TCPConn).CloseWrite() }
