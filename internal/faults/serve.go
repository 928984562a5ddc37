package faults

import (
	"context"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// ServerLink is one proxy of a Toxiproxy server Serve runs: Name listens
// on Listen and forwards every connection to Upstream.
type ServerLink struct {
	Name, Listen, Upstream string
}

// linkName is what a proxy may be called: it is part of the API's paths.
var linkName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ParseLink parses NAME=LISTEN=UPSTREAM (db=0.0.0.0:16432=pgbouncer:6432),
// both addresses host:port; LISTEN's host may be empty (every interface).
func ParseLink(s string) (ServerLink, error) {
	parts := strings.Split(s, "=")
	if len(parts) != 3 {
		return ServerLink{}, fmt.Errorf("link %q: want NAME=LISTEN=UPSTREAM, e.g. db=0.0.0.0:16432=pgbouncer:6432", s)
	}
	l := ServerLink{Name: parts[0], Listen: parts[1], Upstream: parts[2]}
	if !linkName.MatchString(l.Name) {
		return l, fmt.Errorf("link %q: name %q: want letters, digits, _ or -", s, l.Name)
	}
	if err := checkHostPort(l.Listen, false); err != nil {
		return l, fmt.Errorf("link %q: listen address: %w", s, err)
	}
	if err := checkHostPort(l.Upstream, true); err != nil {
		return l, fmt.Errorf("link %q: upstream address: %w", s, err)
	}
	return l, nil
}

// checkHostPort checks a host:port; a dial address needs a host and a
// port other than 0.
func checkHostPort(addr string, dial bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want HOST:PORT: %v", addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q: want 0–65535", addr, port)
	}
	if dial && (host == "" || n == 0) {
		return fmt.Errorf("%q: want a host and a port to connect to", addr)
	}
	return nil
}

// Serve runs a Toxiproxy server, the same code as Toxiproxy's own daemon:
// one proxy per link, started before its API answers on api (host:port),
// until ctx is done; then it stops every proxy, closing the connections
// through them. Toxiproxy's logs (one line per connection, JSON) go to
// logw. Toxiproxy 2.5's API server cannot be shut down: it stops with the
// process, which is what `leakbench faultproxy` does right after.
func Serve(ctx context.Context, api string, links []ServerLink, logw io.Writer) error {
	host, port, err := net.SplitHostPort(api)
	if err != nil {
		return fmt.Errorf("toxiproxy API address %q: want HOST:PORT: %v", api, err)
	}
	if len(links) == 0 {
		return fmt.Errorf("toxiproxy server: no link to proxy")
	}
	logger := zerolog.New(logw).With().Timestamp().Logger()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), logger)
	// Stops every proxy and closes its connections (Clear never fails).
	defer func() { _ = server.Collection.Clear() }()
	for _, l := range links {
		if err := server.Collection.Add(toxiproxy.NewProxy(server, l.Name, l.Listen, l.Upstream), true); err != nil {
			return fmt.Errorf("start the %s link's proxy on %s: %w", l.Name, l.Listen, err)
		}
	}
	// Listen logs a failure to bind and exits the process: the address is
	// tried first so that a taken one is an error, not an exit.
	ln, err := net.Listen("tcp", api)
	if err != nil {
		return fmt.Errorf("toxiproxy API on %s: %w", api, err)
	}
	ln.Close()
	go server.Listen(host, port)
	<-ctx.Done()
	return nil
}
