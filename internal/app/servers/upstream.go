package servers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/leakbench/leakbench/gateway-under-test/upstream"
)

// DefaultUpstreamConfig is the upstream's configuration when nothing is
// given: no latency, no failures, the upstream package's defaults.
func DefaultUpstreamConfig() upstream.Config {
	return upstream.Config{
		Listen:            upstream.DefaultListen,
		ReadHeaderTimeout: upstream.DefaultReadHeaderTimeout,
		BodyReadTimeout:   upstream.DefaultBodyReadTimeout,
		IdleTimeout:       upstream.DefaultIdleTimeout,
	}
}

// ServeUpstream serves the upstream until ctx is done or the server stops,
// then closes it. It logs where it serves to cfg.Logger (nil: slog's
// default).
func ServeUpstream(ctx context.Context, cfg upstream.Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	up, err := upstream.Start(ctx, cfg)
	if errors.Is(err, upstream.ErrBadConfig) {
		return err
	}
	if err != nil {
		return fmt.Errorf("start upstream: %w", err)
	}
	log.Info("upstream serving", "url", up.URL(), "latency", cfg.Latency, "failure_rate", cfg.FailureRate)
	select {
	case <-ctx.Done():
	case <-waitChan(up.Wait):
	}
	return up.Close(context.Background())
}
