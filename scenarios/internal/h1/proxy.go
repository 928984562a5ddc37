package h1

import (
	"fmt"
	"net/url"

	"golang.org/x/net/http/httpproxy"
)

// ProxyIgnored says, when the environment would send a request to u
// through a proxy for any other HTTP client of the machine, that this
// transport does not: it always dials the target itself, speaking
// HTTP/1.1 only (no CONNECT tunnel, no HTTP/2). "" when no proxy applies.
// The rules are net/http's (golang.org/x/net/http/httpproxy): HTTP_PROXY
// for http, HTTPS_PROXY for https, either spelling's case, NO_PROXY
// exempting hosts, and loopback targets never proxied.
//
// Why not honour the proxy: a load test through a proxy measures the
// proxy's connection handling, not the service's, and leaks and pool
// pins are counted per connection to the service. The warning is there
// for a machine whose proxy variables are set for everything else.
func ProxyIgnored(u *url.URL) string {
	proxy, err := httpproxy.FromEnvironment().ProxyFunc()(u)
	if err != nil || proxy == nil {
		return ""
	}
	name := "HTTP_PROXY"
	if u.Scheme == "https" {
		name = "HTTPS_PROXY"
	}
	// Only the proxy's host: its URL may carry credentials.
	return fmt.Sprintf("%s is set (proxy %s), but leakbench sends its load straight to %s: its HTTP client uses no proxy; add the host to NO_PROXY to silence this",
		name, proxy.Host, u.Host)
}
