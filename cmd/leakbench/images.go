package main

import (
	"context"
	"fmt"

	"github.com/leakbench/leakbench/fixtures/images"
	"github.com/leakbench/leakbench/internal/app/servers"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

func cmdImages(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("images")
	var opts images.Options
	fs.StringVar(&opts.Base, "base", "", "where the Debian base comes from: auto (registry's debian:bookworm-slim when one answers, else debootstrap), registry or debootstrap (env LEAKBENCH_IMAGE_BASE)")
	fs.StringVar(&opts.Mirror, "mirror", "", "Debian mirror for debootstrap (env LEAKBENCH_DEBIAN_MIRROR; default: this machine's apt sources)")
	fs.StringVar(&opts.Binary, "binary", "", "static leakbench binary for the gateway image (env LEAKBENCH_BINARY; default: this program)")
	fs.BoolVar(&opts.Rebuild, "rebuild", false, "build every image even when its tag exists")
	asJSON := fs.Bool("json", false, "print the images as JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench images [--base auto|registry|debootstrap] [--mirror URL] [--rebuild] [--json]

Builds the images of the docker provider where they are missing and says where
each came from: leakbench/base (Debian bookworm with postgresql-15 and pgbouncer,
made with debootstrap and 'docker import' when no registry answers),
leakbench/postgres and leakbench/pgbouncer on it, leakbench/gateway (FROM
scratch with this static binary; it also serves the upstream), and
leakbench/leakbench, leakbench itself, also tagged with this binary's version:
docker run leakbench/leakbench:VERSION run --target URL … loads a service from
a container. Each tag holds a hash of its recipe (fixtures/images; for the
gateway its sources, for leakbench/leakbench the binary), so images are reused
until that changes.

`)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	opts.Log = c.stderr
	opts.Version, _ = buildVersion()
	return servers.BuildImages(ctx, opts, c.stdout, *asJSON)
}
