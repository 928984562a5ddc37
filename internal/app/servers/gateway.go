package servers

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/lib/redact"
)

// DefaultGatewayConfig is the gateway's configuration when nothing is
// given: the fixed variant, every default of gateway-under-test, no DSN.
func DefaultGatewayConfig() gateway.Config {
	return gateway.Config{
		Variant:           string(gateway.VariantFixed),
		Listen:            gateway.DefaultListen,
		PoolSize:          gateway.DefaultPoolSize,
		PoolTimeout:       gateway.DefaultPoolTimeout,
		UpstreamTimeout:   gateway.DefaultUpstreamTimeout,
		RunDelay:          gateway.DefaultRunDelay,
		PollInterval:      gateway.DefaultPollInterval,
		PageSize:          gateway.DefaultPageSize,
		MaxBodyBytes:      gateway.DefaultMaxBodyBytes,
		RareLeakEvery:     gateway.DefaultRareLeakEvery,
		SessionTimeout:    gateway.DefaultSessionTimeout,
		ReadHeaderTimeout: gateway.DefaultReadHeaderTimeout,
		BodyReadTimeout:   gateway.DefaultBodyReadTimeout,
		IdleTimeout:       gateway.DefaultIdleTimeout,
	}
}

// ServeGateway serves the reference gateway until ctx is done or the
// server stops, then closes it. It logs where it serves to cfg.Logger
// (nil: slog's default).
func ServeGateway(ctx context.Context, cfg gateway.Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	gw, err := gateway.Start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("start gateway: %w", err)
	}
	log.Info("gateway serving", "mcp", gw.URL(), "metrics", gw.MetricsURL(), "variant", gw.Variants().String(),
		"stateless", cfg.Stateless, "json_response", cfg.JSONResponse, "upstream", redact.URL(cfg.UpstreamURL))
	select {
	case <-ctx.Done():
	case <-waitChan(gw.Wait):
	}
	return gw.Close(context.Background())
}

func waitChan(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}
