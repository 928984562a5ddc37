package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Defaults of Config's zero values.
const (
	DefaultListen          = "127.0.0.1:8080"
	DefaultPoolSize        = 20
	DefaultPoolTimeout     = 30 * time.Second
	DefaultRunDelay        = 5 * time.Second
	DefaultPollInterval    = 500 * time.Millisecond
	DefaultUpstreamTimeout = 30 * time.Second
	DefaultPageSize        = 50
	DefaultMaxBodyBytes    = 1 << 20
	DefaultSessionTimeout  = 10 * time.Minute
	DefaultTaskTTL         = 60 * time.Second
	DefaultRareLeakEvery   = 500

	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyReadTimeout   = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// MaxWait is the longest wait_for_run waits, as in the documented incident.
const MaxWait = 30 * time.Second

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
	// Stateless serves the 2025 era without sessions too. The 2026-07-28
	// era (sessionless by definition) is served either way.
	Stateless bool
	// JSONResponse answers with application/json instead of SSE.
	JSONResponse bool
	// UpstreamURL is the base URL of the upstream HTTP service that
	// call_upstream calls (see package upstream), http or https; Start
	// rejects anything else. Empty: call_upstream fails.
	UpstreamURL string
	// UpstreamTimeout bounds one upstream call. Default 30 s.
	UpstreamTimeout time.Duration
	// RunDelay is how long after start_run a run is done. Default 5 s.
	RunDelay time.Duration
	// PollInterval is how often wait_for_run checks its run, and the
	// pollIntervalMs its tasks suggest. Default 500 ms.
	PollInterval time.Duration
	// TaskTTL is how long a task (wait_for_run under the Tasks extension,
	// tasks.go) lives from its creation — its ttlMs — before it is
	// discarded with whatever it still holds. Default 60 s.
	TaskTTL time.Duration
	// PageSize is the most items tools/list, resources/list and
	// prompts/list return per page. Default 50.
	PageSize int
	// MaxBodyBytes bounds a request body; larger ones get 413. Default 1 MiB.
	MaxBodyBytes int64
	// ReadHeaderTimeout bounds reading a request's headers. Default 10 s.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading a request's body, counted from when
	// its headers are in; a slower body gets 408 and its connection is
	// closed, so a client that trickles a body (or never finishes it) does
	// not hold a goroutine. It is a per-request read deadline, lifted once
	// the body is in: SSE answers and long tools (generate_report,
	// wait_for_run's 30 s) are not bounded by it, and there is no
	// WriteTimeout for the same reason. Default 10 s.
	BodyReadTimeout time.Duration
	// IdleTimeout closes keep-alive connections that wait this long for
	// their next request. Default 2 min.
	IdleTimeout time.Duration
	// TokenUsage records each accepted token's last use
	// (api_tokens.last_used_at, at most once a second per token) in a short
	// unit of work before the request is dispatched, as ContextForge's
	// token-usage middleware does. Off by default, so that the fixed
	// variant's load is what it always was; the session-outside-request
	// variant always tracks usage (its bug is there), so a fair before/after
	// of that variant sets it for fixed too.
	TokenUsage bool
	// SessionTimeout closes stateful MCP sessions idle this long, so
	// abandoned sessions do not pile up under load. Default 10 min;
	// negative: never.
	SessionTimeout time.Duration
	// RequestTimeout bounds each /mcp request's work, as a service's
	// timeout middleware does (deadline.go). Default 0: none.
	RequestTimeout time.Duration
	// RareLeakEvery is how rarely the commit-in-finally-rare variant's
	// error path is reached: one request in RareLeakEvery (rareleak.go).
	// Default 500.
	RareLeakEvery int
	// Logger receives the gateway's logs; nil discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	def(&c.PoolTimeout, DefaultPoolTimeout)
	def(&c.RunDelay, DefaultRunDelay)
	def(&c.PollInterval, DefaultPollInterval)
	def(&c.TaskTTL, DefaultTaskTTL)
	def(&c.UpstreamTimeout, DefaultUpstreamTimeout)
	def(&c.SessionTimeout, DefaultSessionTimeout)
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&c.BodyReadTimeout, DefaultBodyReadTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.PageSize == 0 {
		c.PageSize = DefaultPageSize
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.RareLeakEvery == 0 {
		c.RareLeakEvery = DefaultRareLeakEvery
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.DSN == "":
		return errors.New("no database DSN given")
	case c.RareLeakEvery < 1:
		return fmt.Errorf("rare leak every %d requests: want at least 1", c.RareLeakEvery)
	case c.PoolSize < 1:
		return fmt.Errorf("pool size must be at least 1, got %d", c.PoolSize)
	case c.PoolTimeout < 0 || c.RunDelay < 0 || c.UpstreamTimeout < 0 || c.RequestTimeout < 0:
		return errors.New("pool timeout, run delay, upstream and request timeouts must not be negative")
	case c.TaskTTL < 100*time.Millisecond:
		return fmt.Errorf("task TTL %s: want at least 100ms (a shorter one expires tasks before they are answered)", c.TaskTTL)
	case c.ReadHeaderTimeout < 0 || c.BodyReadTimeout < 0 || c.IdleTimeout < 0:
		return errors.New("read-header, body-read and idle timeouts must not be negative")
	case c.PollInterval < 10*time.Millisecond:
		return fmt.Errorf("poll interval %s: want at least 10ms (a tighter loop only loads the database)", c.PollInterval)
	case c.PageSize < 1:
		return fmt.Errorf("page size must be at least 1, got %d", c.PageSize)
	case c.MaxBodyBytes < 1024:
		return fmt.Errorf("max body size %d bytes: want at least 1024 (an initialize request must fit)", c.MaxBodyBytes)
	}
	_, err := upstreamCallURL(c.UpstreamURL)
	return err
}

// Gateway is a running reference gateway.
type Gateway struct {
	cfg      Config
	variants VariantSet
	store    *Store
	upstream *http.Client
	// upstreamCall is the upstream's /call endpoint; nil: none configured.
	upstreamCall *url.URL
	tasks        *taskStore
	log          *slog.Logger
	srv          *http.Server
	ln           net.Listener
	served       chan error
	// stopping is cancelled by Close, so that tool handlers which outlive
	// their HTTP request (go-sdk does not cancel a stateful handler when its
	// client goes away) stop waiting and polling.
	stopping context.Context
	stop     context.CancelFunc
	// scoped counts the requests token scoping has seen, for
	// commit-in-finally-rare's one in RareLeakEvery (rareleak.go).
	scoped atomic.Uint64
}

// Start validates cfg, connects the pool, and serves MCP at /mcp and
// Prometheus metrics at /metrics until Close.
func Start(ctx context.Context, cfg Config) (*Gateway, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	variants, err := ParseVariants(cfg.Variant)
	if err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, variants: variants, log: cfg.Logger, served: make(chan error, 1)}
	g.upstreamCall, _ = upstreamCallURL(cfg.UpstreamURL) // validated above
	g.tasks = newTaskStore(cfg.TaskTTL, cfg.PollInterval)
	g.stopping, g.stop = context.WithCancel(context.Background())
	// Under load every virtual user calls the upstream at once: keep enough
	// idle connections to it that calls do not churn through local ports.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	g.upstream = &http.Client{Transport: tr, Timeout: cfg.UpstreamTimeout}

	g.store, err = openStore(ctx, cfg.DSN, cfg.PoolSize, cfg.PoolTimeout, g.log)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	g.ln, err = lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		g.store.close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	// No ReadTimeout and no WriteTimeout: both would bound the whole
	// request, and so cut off SSE answers and long tools. (A ReadTimeout
	// also cancels the request's context once it passes, through the
	// server's background read.) The body gets its own deadline in readBody.
	g.srv = &http.Server{Handler: g.Handler(), ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout}
	go func() { g.served <- g.srv.Serve(g.ln) }()
	return g, nil
}

// Handler returns the gateway's HTTP handler: /mcp and /metrics. Each call
// builds a fresh MCP server and metrics registry.
func (g *Gateway) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newPoolCollector(g.store), newTaskCollector(g.tasks),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := newMetrics(reg)

	mcpHandler := g.mcpHandler(g.newMCPServer(m))
	mux := http.NewServeMux()
	mux.Handle("/mcp", m.instrumentHTTP("/mcp", g.readBody(g.requestDeadline(g.tokenScoping(g.trackTokenUse(mcpHandler))))))
	mux.Handle("/metrics", m.instrumentHTTP("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	return mux
}

// modernVersion is the first protocol revision without sessions (MCP
// 2026-07-28), which every request of that era names in its
// MCP-Protocol-Version header.
const modernVersion = "2026-07-28"

// mcpHandler serves both protocol eras on one endpoint, deciding per
// request as the spec's dual-era servers do: go-sdk serves 2026-07-28
// only in its stateless mode, so requests whose MCP-Protocol-Version is
// that revision or later go to a stateless handler of the same server,
// and the 2025 era's (initialize, requests on its Mcp-Session-Id, GET and
// DELETE) to the configured one — stateful by default. Both sit behind
// the same middleware, so token scoping, and every leak variant, treat
// both eras alike.
func (g *Gateway) mcpHandler(server *mcp.Server) http.Handler {
	sessionTimeout := g.cfg.SessionTimeout
	if sessionTimeout < 0 {
		sessionTimeout = 0 // go-sdk: zero means never
	}
	handler := func(stateless bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
			&mcp.StreamableHTTPOptions{
				Stateless:           stateless,
				JSONResponse:        g.cfg.JSONResponse,
				Logger:              g.log,
				SessionTimeout:      sessionTimeout,
				MaxRequestBodyBytes: g.cfg.MaxBodyBytes,
			})
	}
	if g.cfg.Stateless {
		return handler(true) // a stateless handler serves both eras
	}
	legacy, modern := handler(false), handler(true)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := legacy
		if r.Header.Get("Mcp-Protocol-Version") >= modernVersion {
			h = modern
		}
		h.ServeHTTP(w, r)
	})
}

// newMCPServer builds the MCP server: the built-in tools, the per-team tool
// registry and documents, the prompts, and the middleware that measures
// every MCP request.
func (g *Gateway) newMCPServer(m *metrics) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "leakbench-reference-gateway", Version: "0.2.0"},
		&mcp.ServerOptions{
			PageSize:     g.cfg.PageSize,
			Instructions: "leakbench's reference MCP gateway: team-scoped tools, documents and prompts backed by PostgreSQL.",
			// No logging capability: this gateway sends no log messages.
			Capabilities: &mcp.ServerCapabilities{},
		})
	builtin := map[string]bool{}
	g.addTools(server, builtin)
	g.addResources(server)
	g.addPrompts(server)
	addTaskMethods(server)
	server.AddReceivingMiddleware(m.mcpMiddleware(builtin), g.registryMiddleware(builtin), sqlCommentMiddleware, g.taskMiddleware)
	return server
}

// readBody reads the whole request body — bounded in size (413 over
// MaxBodyBytes) and in time (408 after BodyReadTimeout) — before any work
// is done for the request, in particular before token scoping takes a
// database connection. Every variant sees only requests whose body is
// complete: a client that aborts its upload, or never finishes it, is
// answered here and holds no session, so a variant that leaks on a
// cancelled request does not leak on a bad body too. What is left to
// trigger the leaks is what the incident had: a client that gives up after
// sending its whole request. go-sdk reads every body whole anyway; the
// limit it is given is the same.
func (g *Gateway) readBody(next http.Handler) http.Handler {
	tooLarge := func(w http.ResponseWriter) {
		// The rest of the body is not read: close rather than reuse.
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", g.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > g.cfg.MaxBodyBytes {
			tooLarge(w)
			return
		}
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r) // GET (the standalone SSE stream), DELETE
			return
		}
		body, err := g.readWithDeadline(w, r)
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			tooLarge(w)
			return
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("request body not received within %s", g.cfg.BodyReadTimeout), http.StatusRequestTimeout)
			return
		case err != nil:
			// Most likely the client hung up mid-body: nobody reads this.
			w.Header().Set("Connection", "close")
			http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		// The request's trace context, for token scoping's SQL.
		r = r.WithContext(withSQLComment(r.Context(), httpSQLComment(r, body)))
		next.ServeHTTP(w, r)
	})
}

// readWithDeadline reads r's body under a read deadline of
// BodyReadTimeout, then lifts the deadline, so that it does not end the
// request later: once a body is read the server keeps reading the
// connection in the background (to notice a client that goes away), and a
// deadline passing there would cancel the request's context mid-stream.
func (g *Gateway) readWithDeadline(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	// Not every ResponseWriter has deadlines (httptest's has not): then
	// the body is read without one.
	if rc.SetReadDeadline(time.Now().Add(g.cfg.BodyReadTimeout)) == nil {
		defer rc.SetReadDeadline(time.Time{}) //nolint:errcheck // supported: it was just set
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes))
}

// bound derives a context that also ends when the gateway closes.
func (g *Gateway) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(g.stopping, cancel)
	return ctx, func() { stop(); cancel() }
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
	g.stop()
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	if serr := g.srv.Shutdown(sctx); serr != nil {
		// Requests still waiting for the database (a leaky variant has
		// exhausted the pool) do not stop on their own: cut them off.
		g.log.Warn("requests still in flight at shutdown; closing their connections", "err", serr)
		err = g.srv.Close()
	}
	g.closeTasks() // before the pool: it waits for connections still checked out
	g.store.close()
	g.upstream.CloseIdleConnections()
	return err
}
