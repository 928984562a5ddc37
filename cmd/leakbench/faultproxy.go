package main

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/leakbench/leakbench/fixtures/faultproxy"
	"github.com/leakbench/leakbench/internal/app/servers"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

// linkFlags collect repeated --link NAME=LISTEN=UPSTREAM flags, each
// checked as it is parsed so that a bad one is a usage error naming it.
type linkFlags []faultproxy.ServerLink

func (l *linkFlags) String() string {
	parts := make([]string, len(*l))
	for i, x := range *l {
		parts[i] = x.Name + "=" + x.Listen + "=" + x.Upstream
	}
	return strings.Join(parts, " ")
}

func (l *linkFlags) Set(v string) error {
	link, err := servers.ParseFaultLink(v)
	if err != nil {
		return err
	}
	for _, x := range *l {
		if x.Name == link.Name {
			return fmt.Errorf("link %s given twice", link.Name)
		}
	}
	*l = append(*l, link)
	return nil
}

// cmdFaultproxy runs the docker stack's fault proxies: Toxiproxy's server,
// in the leakbench image the gateway and upstream containers run, so that
// no other image (and no registry) is needed. Internal: the docker
// provider starts it; leakbench drives its API.
func cmdFaultproxy(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("faultproxy")
	api := fs.String("api", "127.0.0.1:8474", "address (HOST:PORT) Toxiproxy's HTTP API listens on")
	var links linkFlags
	fs.Var(&links, "link", "a proxy, NAME=LISTEN=UPSTREAM (repeat it for each link)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench faultproxy [--api HOST:PORT] --link NAME=LISTEN=UPSTREAM [--link …]

Internal: the docker provider runs it in the stack's "faults" container. Runs
a Toxiproxy server (github.com/Shopify/toxiproxy/v2) with one proxy per
--link: NAME listens on LISTEN and forwards each connection to UPSTREAM, e.g.

  leakbench faultproxy --api 0.0.0.0:8474 \
    --link db=0.0.0.0:16432=pgbouncer:6432 --link pg=0.0.0.0:15432=postgres:5432

The proxies pass bytes unchanged until a toxic is put on one through the API
(POST /proxies/NAME/toxics), as a run's faults: timeline does. Toxiproxy's
log, a JSON line per event, goes to stderr. Stops on SIGINT or SIGTERM,
closing every connection through its proxies.

`)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(*api); err != nil {
		return fmt.Errorf("%w: --api %q: want HOST:PORT (%w)", cliflag.ErrUsage, *api, err)
	}
	if len(links) == 0 {
		return fmt.Errorf("%w: faultproxy needs at least one --link NAME=LISTEN=UPSTREAM", cliflag.ErrUsage)
	}
	return servers.ServeFaultProxy(ctx, *api, links, c.stderr)
}
