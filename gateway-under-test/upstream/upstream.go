// Package upstream is the slow HTTP service behind the reference gateway's
// call_upstream tool: what a federating MCP gateway calls on a user's behalf
// (another MCP server, a REST API). It answers after a configurable latency
// and fails a configurable fraction of calls, so that the gateway's
// behaviour while it waits — does it hold a database transaction open across
// the call? (ContextForge #2518, #2323) — can be measured.
//
//	up, err := upstream.Start(ctx, upstream.Config{Latency: 2 * time.Second, FailureRate: 0.1})
//	if err != nil { ... }
//	defer up.Close(context.Background())
//	resp, err := http.Post(up.URL()+"/call", "application/json", body)
//
// Endpoints:
//
//	POST /call     waits the latency, then echoes the request body as
//	               {"echo": …, "latency_ms": …}; with probability FailureRate
//	               it answers 503 {"error": "injected failure"} instead.
//	               ?latency_ms=N overrides the latency for this call, so a
//	               scenario can mix fast and slow calls.
//	GET  /healthz  200 "ok", at once.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultListen is where the upstream listens unless told otherwise:
// loopback only, since load must stay on this machine.
const DefaultListen = "127.0.0.1:8090"

// MaxLatency bounds the latency a caller may ask for with ?latency_ms, so a
// typo cannot park a connection for hours.
const MaxLatency = 10 * time.Minute

// maxBody bounds the request body the upstream reads and echoes.
const maxBody = 64 << 10

// Defaults of Config's timeouts.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyReadTimeout   = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// Config configures the upstream. Zero values mean the defaults.
type Config struct {
	// Listen is the address to serve on. Default DefaultListen.
	Listen string
	// Latency is how long each call takes before it is answered.
	Latency time.Duration
	// FailureRate is the fraction of calls answered 503, in [0, 1].
	FailureRate float64
	// Seed makes the failure sequence reproducible; 0 picks a random one.
	Seed uint64
	// ReadHeaderTimeout bounds reading a request's headers. Default 10 s.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading a /call body (408 after it); a
	// per-request read deadline lifted once the body is in, so that it does
	// not cut off the call's latency. Default 10 s.
	BodyReadTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long. Default 2 min.
	IdleTimeout time.Duration
	// Logger receives the upstream's logs; nil discards them.
	Logger *slog.Logger
}

// ErrBadConfig wraps every error Start returns for an invalid Config.
var ErrBadConfig = errors.New("bad upstream config")

func (c Config) validate() error {
	if c.Latency < 0 || c.Latency > MaxLatency {
		return fmt.Errorf("%w: latency %s: want 0 to %s", ErrBadConfig, c.Latency, MaxLatency)
	}
	// !(x >= 0 && x <= 1) also catches NaN.
	if !(c.FailureRate >= 0 && c.FailureRate <= 1) {
		return fmt.Errorf("%w: failure rate %g: want a fraction between 0 and 1", ErrBadConfig, c.FailureRate)
	}
	if c.ReadHeaderTimeout < 0 || c.BodyReadTimeout < 0 || c.IdleTimeout < 0 {
		return fmt.Errorf("%w: read-header, body-read and idle timeouts must not be negative", ErrBadConfig)
	}
	return nil
}

// Stats counts what the upstream has answered.
type Stats struct {
	// Calls is every /call request that reached the handler.
	Calls int64
	// Failures is the calls answered with an injected 503.
	Failures int64
	// Abandoned is the calls whose client went away during the latency.
	Abandoned int64
}

// Server is a running upstream.
type Server struct {
	cfg    Config
	log    *slog.Logger
	ln     net.Listener
	srv    *http.Server
	served chan error

	mu  sync.Mutex // guards rng: math/rand/v2 sources are not safe for concurrent use
	rng *rand.Rand

	calls, failures, abandoned atomic.Int64
}

// Start validates cfg and serves until Close.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.ReadHeaderTimeout, DefaultReadHeaderTimeout}, {&cfg.BodyReadTimeout, DefaultBodyReadTimeout}, {&cfg.IdleTimeout, DefaultIdleTimeout}} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, served: make(chan error, 1), rng: rand.New(rand.NewPCG(seed, 0x75b57e4a))}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("upstream: listen on %s: %w", cfg.Listen, err)
	}
	s.ln = ln
	// No ReadTimeout or WriteTimeout: they would bound the call's latency
	// too. The body has its own deadline (serveCall).
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout}
	go func() { s.served <- s.srv.Serve(ln) }()
	return s, nil
}

// Handler returns the upstream's HTTP handler (also usable without Start).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /call", s.serveCall)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// URL is the upstream's base URL (http://host:port, no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Stats returns the counts so far.
func (s *Server) Stats() Stats {
	return Stats{Calls: s.calls.Load(), Failures: s.failures.Load(), Abandoned: s.abandoned.Load()}
}

// Wait blocks until the server stops serving.
func (s *Server) Wait() error {
	err := <-s.served
	s.served <- err
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops serving. Calls still waiting out their latency are cut off
// after 2 s rather than awaited: their callers are being stopped too.
func (s *Server) Close(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

func (s *Server) serveCall(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	latency := s.cfg.Latency
	if q := r.URL.Query().Get("latency_ms"); q != "" {
		ms, err := strconv.ParseInt(q, 10, 64)
		if err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > MaxLatency {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": fmt.Sprintf("latency_ms %q: want 0 to %d", q, MaxLatency.Milliseconds())})
			return
		}
		latency = time.Duration(ms) * time.Millisecond
	}
	body, err := s.readBody(w, r)
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("read request body: %v", err)})
		return
	case errors.As(err, &ne) && ne.Timeout():
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestTimeout, map[string]any{"error": fmt.Sprintf("request body not received within %s", s.cfg.BodyReadTimeout)})
		return
	case err != nil:
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": fmt.Sprintf("read request body: %v", err)})
		return
	}
	t := time.NewTimer(latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		s.abandoned.Add(1) // the caller gave up; nobody reads an answer
		return
	}
	if s.fail() {
		s.failures.Add(1)
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "injected failure"})
		return
	}
	var echo any = string(body)
	if json.Valid(body) {
		echo = json.RawMessage(body)
	}
	writeJSON(w, http.StatusOK, map[string]any{"echo": echo, "latency_ms": latency.Milliseconds()})
}

// readBody reads the body under a read deadline of BodyReadTimeout and
// then lifts it: left in place, it would end the call while it waits out
// its latency (the server's background read would hit it and cancel the
// request's context).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	if s.cfg.BodyReadTimeout > 0 && rc.SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout)) == nil {
		defer rc.SetReadDeadline(time.Time{}) //nolint:errcheck // supported: it was just set
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
}

func (s *Server) fail() bool {
	if s.cfg.FailureRate <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < s.cfg.FailureRate
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client may be gone; nothing to do about it
}
