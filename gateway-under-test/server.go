package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures the gateway. Zero values mean the defaults.
type Config struct {
	// DSN reaches the application database (normally through PgBouncer).
	DSN string
	// Variant is a comma-separated list of variants; default "fixed".
	Variant string
	// PoolSize bounds the gateway's own connection pool. Default 20.
	PoolSize int
	// PoolTimeout is how long a request waits for a pooled connection
	// before failing (SQLAlchemy's pool_timeout). Default 30 s.
	PoolTimeout time.Duration
	// Listen is the address to serve on. Default 127.0.0.1:8080.
	Listen string
	// Stateless serves MCP without sessions.
	Stateless bool
	// JSONResponse answers with application/json instead of SSE.
	JSONResponse bool
	// Logger receives the gateway's logs; nil discards them.
	Logger *slog.Logger
}

// Gateway is a running reference gateway.
type Gateway struct {
	cfg      Config
	variants VariantSet
	cleanup  cleanupFunc
	store    *Store
	log      *slog.Logger
	srv      *http.Server
	ln       net.Listener
	served   chan error
}

// Start validates cfg, connects the pool, and serves MCP at /mcp and
// Prometheus metrics at /metrics until Close.
func Start(ctx context.Context, cfg Config) (*Gateway, error) {
	if cfg.PoolSize == 0 {
		cfg.PoolSize = 20
	}
	if cfg.PoolTimeout == 0 {
		cfg.PoolTimeout = 30 * time.Second
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:8080"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.PoolSize < 1 {
		return nil, fmt.Errorf("pool size must be at least 1, got %d", cfg.PoolSize)
	}
	if cfg.DSN == "" {
		return nil, errors.New("no database DSN given")
	}
	variants, err := ParseVariants(cfg.Variant)
	if err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, variants: variants, cleanup: cleanupFixed, log: cfg.Logger, served: make(chan error, 1)}
	if variants[VariantCommitInFinally] {
		g.cleanup = cleanupCommitInFinally
	}
	g.store, err = openStore(ctx, cfg.DSN, cfg.PoolSize, cfg.PoolTimeout, g.log)
	if err != nil {
		return nil, err
	}
	g.ln, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		g.store.close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	g.srv = &http.Server{Handler: g.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { g.served <- g.srv.Serve(g.ln) }()
	return g, nil
}

// Handler returns the gateway's HTTP handler: /mcp and /metrics.
func (g *Gateway) Handler() http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: "leakbench-reference-gateway", Version: "0.1.0"}, nil)
	g.addTools(server)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: g.cfg.Stateless, JSONResponse: g.cfg.JSONResponse, Logger: g.log})

	reg := prometheus.NewRegistry()
	reg.MustRegister(newPoolCollector(g.store))
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.tokenScoping(mcpHandler))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// Addr is the address the gateway listens on.
func (g *Gateway) Addr() string { return g.ln.Addr().String() }

// URL is the MCP endpoint.
func (g *Gateway) URL() string { return "http://" + g.Addr() + "/mcp" }

// MetricsURL is the Prometheus endpoint.
func (g *Gateway) MetricsURL() string { return "http://" + g.Addr() + "/metrics" }

// Variants returns the enabled variants.
func (g *Gateway) Variants() VariantSet { return g.variants }

// Wait blocks until the server stops serving.
func (g *Gateway) Wait() error {
	err := <-g.served
	g.served <- err
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving (waiting up to 5 s for requests in flight) and closes
// the pool, including the connections of leaked sessions.
func (g *Gateway) Close(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	if serr := g.srv.Shutdown(sctx); serr != nil {
		// Requests still waiting for the database (a leaky variant has
		// exhausted the pool) do not stop on their own: cut them off.
		g.log.Warn("requests still in flight at shutdown; closing their connections", "err", serr)
		err = g.srv.Close()
	}
	g.store.close()
	return err
}
