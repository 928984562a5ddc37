package h1

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"testing"
	"time"
)

// TestSourceAddrsTakenInTurn: a transport given source addresses dials
// from each in turn, so that a run past one address's local ports spreads
// its connections (loopback: all of 127.0.0.0/8 is this machine's).
func TestSourceAddrsTakenInTurn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close() // the dial is what is tested
		}
	}()
	u, _ := url.Parse("http://" + ln.Addr().String() + "/mcp")
	tr := New(u, time.Second, 4, nil)
	srcs := []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	tr.SetSourceAddrs(srcs)
	seen := map[string]int{}
	for range 4 {
		pc, err := tr.get(context.Background(), nil, time.Now().Add(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		seen[pc.c.LocalAddr().(*net.TCPAddr).IP.String()]++
		pc.close()
	}
	for _, a := range srcs {
		if seen[a.String()] != 2 {
			t.Errorf("dialed from %v; want 2 connections from each of %v", seen, srcs)
		}
	}
}
