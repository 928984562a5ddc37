package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/leakbench/leakbench/gateway-under-test/upstream"
)

func cmdUpstream(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("upstream", flag.ContinueOnError)
	e := &envFlags{fs: fs}
	listen := e.String("listen", "LEAKBENCH_UPSTREAM_LISTEN", upstream.DefaultListen, "address to serve on")
	latency := e.Duration("latency", "LEAKBENCH_UPSTREAM_LATENCY", 0, "how long each call takes before it is answered (at most "+upstream.MaxLatency.String()+")")
	failureRate := e.Float64("failure-rate", "LEAKBENCH_UPSTREAM_FAILURE_RATE", 0, "fraction of calls answered 503, 0 to 1")
	seed := e.Uint64("seed", "LEAKBENCH_UPSTREAM_SEED", 0, "seed of the failure sequence (0: random)")
	readHeaderTimeout := e.Duration("read-header-timeout", "LEAKBENCH_UPSTREAM_READ_HEADER_TIMEOUT", upstream.DefaultReadHeaderTimeout, "how long a client may take to send a request's headers")
	bodyReadTimeout := e.Duration("body-read-timeout", "LEAKBENCH_UPSTREAM_BODY_READ_TIMEOUT", upstream.DefaultBodyReadTimeout, "how long a client may take to send a /call body (408 after it)")
	idleTimeout := e.Duration("idle-timeout", "LEAKBENCH_UPSTREAM_IDLE_TIMEOUT", upstream.DefaultIdleTimeout, "close keep-alive connections idle this long")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, `Usage: leakbench upstream [--listen ADDR] [--latency D] [--failure-rate F]

Serves the slow upstream HTTP service the reference gateway's call_upstream tool
calls: POST /call answers after the latency (?latency_ms=N overrides it per call)
and fails the given fraction of calls with 503; GET /healthz answers at once.
Every flag can also be set with the environment variable named in its help.

`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := e.Err(); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	up, err := upstream.Start(ctx, upstream.Config{Listen: *listen, Latency: *latency, FailureRate: *failureRate, Seed: *seed,
		ReadHeaderTimeout: *readHeaderTimeout, BodyReadTimeout: *bodyReadTimeout, IdleTimeout: *idleTimeout, Logger: log})
	if errors.Is(err, upstream.ErrBadConfig) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err != nil {
		return fmt.Errorf("start upstream: %w", err)
	}
	log.Info("upstream serving", "url", up.URL(), "latency", *latency, "failure_rate", *failureRate)
	select {
	case <-ctx.Done():
	case <-waitChan(up.Wait):
	}
	return up.Close(context.Background())
}
