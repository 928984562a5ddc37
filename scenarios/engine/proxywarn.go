package engine

import (
	"fmt"
	"io"
	"net/url"

	"github.com/leakbench/leakbench/scenarios/internal/h1"
)

// warnIgnoredProxy writes one line to w (the progress stream; nil: none)
// when the environment's HTTP_PROXY or HTTPS_PROXY would route the target
// through a proxy that the engine's HTTP client does not use: on a machine
// that reaches the service only through it, the preflight then fails
// (DNS, refused, timeout), and this line says why.
func warnIgnoredProxy(w io.Writer, target string) {
	if w == nil {
		return
	}
	u, err := url.Parse(target)
	if err != nil {
		return
	}
	if msg := h1.ProxyIgnored(u); msg != "" {
		fmt.Fprintln(w, "warning: "+msg)
	}
}
