package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/leakbench/leakbench/gateway-under-test/upstream"
	"github.com/leakbench/leakbench/internal/app/servers"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

func cmdUpstream(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("upstream")
	e := cliflag.NewEnv(fs, c.lookupEnv)
	def := servers.DefaultUpstreamConfig()
	listen := e.String("listen", "LEAKBENCH_UPSTREAM_LISTEN", def.Listen, "address to serve on")
	latency := e.Duration("latency", "LEAKBENCH_UPSTREAM_LATENCY", 0, "how long each call takes before it is answered (at most "+upstream.MaxLatency.String()+")")
	failureRate := e.Float64("failure-rate", "LEAKBENCH_UPSTREAM_FAILURE_RATE", 0, "fraction of calls answered 503, 0 to 1")
	seed := e.Uint64("seed", "LEAKBENCH_UPSTREAM_SEED", 0, "seed of the failure sequence (0: random)")
	readHeaderTimeout := e.Duration("read-header-timeout", "LEAKBENCH_UPSTREAM_READ_HEADER_TIMEOUT", def.ReadHeaderTimeout, "how long a client may take to send a request's headers")
	bodyReadTimeout := e.Duration("body-read-timeout", "LEAKBENCH_UPSTREAM_BODY_READ_TIMEOUT", def.BodyReadTimeout, "how long a client may take to send a /call body (408 after it)")
	idleTimeout := e.Duration("idle-timeout", "LEAKBENCH_UPSTREAM_IDLE_TIMEOUT", def.IdleTimeout, "close keep-alive connections idle this long")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench upstream [--listen ADDR] [--latency D] [--failure-rate F]

Serves the slow upstream HTTP service the reference gateway's call_upstream tool
calls: POST /call answers after the latency (?latency_ms=N overrides it per call)
and fails the given fraction of calls with 503; GET /healthz answers at once.
Every flag can also be set with the environment variable named in its help.

`)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if err := e.Err(); err != nil {
		return err
	}
	err := servers.ServeUpstream(ctx, upstream.Config{Listen: *listen, Latency: *latency, FailureRate: *failureRate, Seed: *seed,
		ReadHeaderTimeout: *readHeaderTimeout, BodyReadTimeout: *bodyReadTimeout, IdleTimeout: *idleTimeout,
		Logger: slog.New(slog.NewTextHandler(c.stderr, nil))})
	if errors.Is(err, upstream.ErrBadConfig) {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	return err
}
