package engine

import (
	"strings"
	"testing"
)

// TestWarnIgnoredProxy: a proxy the environment sets for the target is
// warned about on the progress stream, once, naming the variable; a
// loopback target (never proxied) and a nil stream get nothing.
func TestWarnIgnoredProxy(t *testing.T) {
	// The lower-case spelling wins over the upper-case one (as curl's).
	t.Setenv("https_proxy", "http://proxy.example:3128")
	t.Setenv("no_proxy", "")
	t.Setenv("NO_PROXY", "")
	t.Setenv("REQUEST_METHOD", "") // a CGI request ignores HTTP_PROXY
	var b strings.Builder
	warnIgnoredProxy(&b, "https://svc.example/mcp")
	if got := b.String(); !strings.HasPrefix(got, "warning: HTTPS_PROXY is set") || strings.Count(got, "\n") != 1 {
		t.Errorf("warning %q, want one line naming HTTPS_PROXY", got)
	}
	b.Reset()
	warnIgnoredProxy(&b, "https://127.0.0.1:8443/mcp")
	if b.Len() != 0 {
		t.Errorf("loopback target warned: %q", b.String())
	}
	warnIgnoredProxy(nil, "https://svc.example/mcp") // no stream: no panic
}
