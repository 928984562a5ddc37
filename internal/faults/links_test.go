package faults

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestProxyToxics: bytes pass a link's in-process proxy unchanged;
// reset_peer cuts the connections through it; after its removal new
// connections work; Close stops the proxy.
func TestProxyToxics(t *testing.T) {
	p := NewProxies()
	defer p.Close()
	addr, err := p.Add(LinkDB, echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	checkResetPeer(t, p, addr)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("the proxy still listens after Close")
	}
}

// TestRemoteToxics: the same toxics through a Toxiproxy server's HTTP API
// (Serve, as `leakbench faultproxy` runs it, and Remote); Close resets the
// server's toxics, and the server stops its proxies when its context ends.
func TestRemoteToxics(t *testing.T) {
	api := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, api, []ServerLink{{Name: LinkDB, Listen: "127.0.0.1:0", Upstream: echoServer(t)}}, io.Discard)
	}()
	var p *Proxies
	for deadline := time.Now().Add(5 * time.Second); ; {
		var err error
		if p, err = Remote(ctx, "http://"+api); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the toxiproxy API never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	addr := p.Addr(LinkDB)
	if !p.Has(LinkDB) || addr == "" || p.Has(LinkPG) {
		t.Fatalf("Has(db) %v Addr(db) %q Has(pg) %v: want only db", p.Has(LinkDB), addr, p.Has(LinkPG))
	}
	if _, err := p.Add(LinkPG, "127.0.0.1:1"); err == nil {
		t.Error("Add on a remote server's proxies was accepted")
	}
	checkResetPeer(t, p, addr)

	// A toxic left on is taken off by Close, on the server.
	if err := p.AddToxic("left", Spec{Link: LinkDB, Toxic: "reset_peer"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := echo(t, addr); err != nil {
		t.Errorf("after Close the toxic is still on: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := p.AddToxic("late", Spec{Link: LinkDB, Toxic: "reset_peer"}); err == nil {
		t.Error("AddToxic after Close was accepted")
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("the server's proxy still listens after Serve returned")
	}
}

func TestRemoteBadAPI(t *testing.T) {
	for _, api := range []string{"127.0.0.1:8474", "ftp://x", "http://"} {
		if _, err := Remote(context.Background(), api); err == nil || !strings.Contains(err.Error(), "want http://HOST:PORT") {
			t.Errorf("Remote(%q): %v", api, err)
		}
	}
	if _, err := Remote(context.Background(), "http://"+freeAddr(t)); err == nil || !strings.Contains(err.Error(), "list the proxies") {
		t.Errorf("nothing listening: %v", err)
	}
}

func TestServeBadInput(t *testing.T) {
	ctx := context.Background()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	link := ServerLink{Name: LinkDB, Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1"}
	for _, tt := range []struct {
		name  string
		api   string
		links []ServerLink
		want  string
	}{
		{"api without port", "localhost", []ServerLink{link}, "want HOST:PORT"},
		{"no link", freeAddr(t), nil, "no link to proxy"},
		{"link's port taken", freeAddr(t), []ServerLink{{Name: LinkDB, Listen: taken.Addr().String(), Upstream: "127.0.0.1:1"}}, "start the db link's proxy"},
		{"api's port taken", taken.Addr().String(), []ServerLink{link}, "toxiproxy API on"},
	} {
		err := Serve(ctx, tt.api, tt.links, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want …%s…", tt.name, err, tt.want)
		}
	}
}

func TestParseLink(t *testing.T) {
	l, err := ParseLink("db=0.0.0.0:16432=pgbouncer:6432")
	if err != nil || l != (ServerLink{"db", "0.0.0.0:16432", "pgbouncer:6432"}) {
		t.Fatalf("ParseLink: %+v, %v", l, err)
	}
	if l, err := ParseLink("pg=:15432=[::1]:5432"); err != nil || l.Listen != ":15432" {
		t.Errorf("empty listen host, IPv6 upstream: %+v, %v", l, err)
	}
	for in, want := range map[string]string{
		"db":                         "want NAME=LISTEN=UPSTREAM",
		"db=:1=a:2=b":                "want NAME=LISTEN=UPSTREAM",
		"d b=:1=a:2":                 `name "d b"`,
		"=:1=a:2":                    `name ""`,
		"db=16432=pgbouncer:6432":    "listen address",
		"db=:99999=pgbouncer:6432":   "port \"99999\"",
		"db=:16432=pgbouncer":        "upstream address",
		"db=:16432=:6432":            "want a host and a port",
		"db=:16432=pgbouncer:0":      "want a host and a port",
		"db=:16432=pgbouncer:bouncy": "port \"bouncy\"",
	} {
		if _, err := ParseLink(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLink(%q): %v, want …%s…", in, err, want)
		}
	}
}

// checkResetPeer: bytes pass addr, the db link's proxy on p, unchanged;
// reset_peer cuts them; after its removal new connections work; a toxic on
// a link p does not proxy is refused.
func checkResetPeer(t *testing.T, p *Proxies, addr string) {
	t.Helper()
	if err := echo(t, addr); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	if err := p.AddToxic("f0", Spec{Link: LinkDB, Toxic: "reset_peer"}); err != nil {
		t.Fatal(err)
	}
	if err := echo(t, addr); err == nil {
		t.Error("reset_peer: the echo got through")
	}
	if err := p.RemoveToxic(LinkDB, "f0"); err != nil {
		t.Fatal(err)
	}
	if err := echo(t, addr); err != nil {
		t.Errorf("after the toxic: %v", err)
	}
	if err := p.AddToxic("x", Spec{Link: LinkPG, Toxic: "latency"}); err == nil {
		t.Error("a toxic on a link the stack does not proxy was accepted")
	}
	if err := p.RemoveToxic(LinkDB, "never-added"); err == nil {
		t.Error("removing a toxic that is not on succeeded")
	}
}

// echoServer serves TCP echo on 127.0.0.1 until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// echo sends a line through addr and checks that it comes back.
func echo(t *testing.T, addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err == nil && line != "ping\n" {
		t.Errorf("echo %q", line)
	}
	return err
}

// freeAddr is a 127.0.0.1 address nothing listens on (a moment ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
