package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/leakbench/leakbench/internal/app/servers"
)

func cmdImages(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	var opts servers.ImagesOptions
	fs.StringVar(&opts.Base, "base", "", "where the Debian base comes from: auto (registry's debian:bookworm-slim when one answers, else debootstrap), registry or debootstrap (env LEAKBENCH_IMAGE_BASE)")
	fs.StringVar(&opts.Mirror, "mirror", "", "Debian mirror for debootstrap (env LEAKBENCH_DEBIAN_MIRROR; default: this machine's apt sources)")
	fs.StringVar(&opts.Binary, "binary", "", "static leakbench binary for the gateway image (env LEAKBENCH_BINARY; default: this program)")
	fs.BoolVar(&opts.Rebuild, "rebuild", false, "build every image even when its tag exists")
	asJSON := fs.Bool("json", false, "print the images as JSON")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, `Usage: leakbench images [--base auto|registry|debootstrap] [--mirror URL] [--rebuild] [--json]

Builds the images of the docker provider where they are missing and says where
each came from: leakbench/base (Debian bookworm with postgresql-15 and pgbouncer,
made with debootstrap and 'docker import' when no registry answers),
leakbench/postgres and leakbench/pgbouncer on it, and leakbench/gateway (FROM
scratch with this static binary; it also serves the upstream). Each tag holds a
hash of its recipe (fixtures/images), so images are reused until that changes.

`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts.Log = os.Stderr
	return servers.BuildImages(ctx, opts, os.Stdout, *asJSON)
}
