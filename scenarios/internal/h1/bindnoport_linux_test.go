package h1

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSourceAddrBindsNoPort: a connection dialed from a source address
// leaves its port to connect (IP_BIND_ADDRESS_NO_PORT), so that dials
// stay cheap with thousands of connections per address.
func TestSourceAddrBindsNoPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close() // the dial is what is tested
		}
	}()
	u, _ := url.Parse("http://" + ln.Addr().String() + "/mcp")
	tr := New(u, time.Second, 4, nil)
	tr.SetSourceAddrs([]netip.Addr{netip.MustParseAddr("127.0.0.2")})
	pc, err := tr.get(context.Background(), nil, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.close()
	rc, err := pc.c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT) }); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	if v != 1 {
		t.Errorf("IP_BIND_ADDRESS_NO_PORT is %d on a source-address connection, want 1", v)
	}
}
