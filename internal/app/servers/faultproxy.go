package servers

import (
	"context"
	"fmt"
	"io"

	"github.com/leakbench/leakbench/fixtures/faultproxy"
)

// ParseFaultLink parses NAME=LISTEN=UPSTREAM
// (db=0.0.0.0:16432=pgbouncer:6432).
func ParseFaultLink(s string) (faultproxy.ServerLink, error) { return faultproxy.ParseLink(s) }

// ServeFaultProxy runs a Toxiproxy server, its API on api (HOST:PORT) and
// one proxy per link, until ctx is done; Toxiproxy's log goes to logw.
func ServeFaultProxy(ctx context.Context, api string, links []faultproxy.ServerLink, logw io.Writer) error {
	if err := faultproxy.Serve(ctx, api, links, logw); err != nil {
		return fmt.Errorf("faultproxy: %w", err)
	}
	return nil
}
