package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/app/servers"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
)

func cmdGateway(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("gateway")
	e := cliflag.NewEnv(fs, c.lookupEnv)
	def := servers.DefaultGatewayConfig()
	dsnFlag := cliflag.NewSecret(fs, "dsn", "LEAKBENCH_GATEWAY_DSN", "PostgreSQL `DSN` of the application database, normally through PgBouncer; required")
	dsnFlag.Getenv = c.getenv
	variant := e.String("variant", "LEAKBENCH_GATEWAY_VARIANT", def.Variant, "variant, or several leak variants comma-separated; known: "+gateway.VariantNames())
	listen := e.String("listen", "LEAKBENCH_GATEWAY_LISTEN", def.Listen, "address to serve on")
	poolSize := e.Int("pool-size", "LEAKBENCH_GATEWAY_POOL_SIZE", def.PoolSize, "size of the gateway's own connection pool")
	poolTimeout := e.Duration("pool-timeout", "LEAKBENCH_GATEWAY_POOL_TIMEOUT", def.PoolTimeout, "how long a request waits for a pooled connection before it fails (503 during token scoping, a tool error inside a tool)")
	requestTimeout := e.Duration("request-timeout", "LEAKBENCH_GATEWAY_REQUEST_TIMEOUT", 0, "bound each /mcp request's work, as a service's own request deadline does (0: none); under commit-in-finally, a deadline that fires during a slow COMMIT leaks the session (the faults profile)")
	upstreamURL := e.String("upstream-url", "LEAKBENCH_GATEWAY_UPSTREAM_URL", "", "http(s) base URL of the upstream service call_upstream calls (see 'leakbench upstream'); empty: call_upstream fails")
	upstreamTimeout := e.Duration("upstream-timeout", "LEAKBENCH_GATEWAY_UPSTREAM_TIMEOUT", def.UpstreamTimeout, "how long one upstream call may take")
	runDelay := e.Duration("run-delay", "LEAKBENCH_GATEWAY_RUN_DELAY", def.RunDelay, "how long after start_run a run is done")
	pollInterval := e.Duration("poll-interval", "LEAKBENCH_GATEWAY_POLL_INTERVAL", def.PollInterval, "how often wait_for_run checks its run")
	pageSize := e.Int("page-size", "LEAKBENCH_GATEWAY_PAGE_SIZE", def.PageSize, "items per page of tools/list, resources/list and prompts/list")
	maxBody := e.Int64("max-body-bytes", "LEAKBENCH_GATEWAY_MAX_BODY_BYTES", def.MaxBodyBytes, "largest request body accepted; larger ones get 413")
	sessionTimeout := e.Duration("session-timeout", "LEAKBENCH_GATEWAY_SESSION_TIMEOUT", def.SessionTimeout, "close stateful MCP sessions idle this long (negative: never)")
	stateless := e.Bool("stateless", "LEAKBENCH_GATEWAY_STATELESS", false, "serve MCP without sessions (no Mcp-Session-Id)")
	jsonResp := e.Bool("json-response", "LEAKBENCH_GATEWAY_JSON_RESPONSE", false, "answer with application/json instead of text/event-stream")
	readHeaderTimeout := e.Duration("read-header-timeout", "LEAKBENCH_GATEWAY_READ_HEADER_TIMEOUT", def.ReadHeaderTimeout, "how long a client may take to send a request's headers")
	bodyReadTimeout := e.Duration("body-read-timeout", "LEAKBENCH_GATEWAY_BODY_READ_TIMEOUT", def.BodyReadTimeout, "how long a client may take to send a request's body (408 after it); the body is read whole before any database work")
	idleTimeout := e.Duration("idle-timeout", "LEAKBENCH_GATEWAY_IDLE_TIMEOUT", def.IdleTimeout, "close keep-alive connections idle this long")
	rareLeakEvery := e.Int("rare-leak-every", "LEAKBENCH_GATEWAY_RARE_LEAK_EVERY", def.RareLeakEvery, "commit-in-finally-rare: one request in this many takes the error path that leaks its session")
	tokenUsage := e.Bool("token-usage", "LEAKBENCH_GATEWAY_TOKEN_USAGE", false, "record each token's last use (at most once a second per token); the session-outside-request variant leaks there, so compare it with a fixed run that has this on")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench gateway --dsn DSN [--variant V] [--listen ADDR] [--pool-size N] [--upstream-url URL]
                         [--run-delay D] [--stateless] [--json-response] [flags]

Serves the reference MCP gateway at http://ADDR/mcp (Streamable HTTP; bearer tokens
from the api_tokens table) and its Prometheus metrics at http://ADDR/metrics.
The database must hold leakbench's schema (fixtures/schema.sql). Every flag can
also be set with the environment variable named in its help.

Variants (--variant; the leak variants combine, comma-separated, but not with fixed):
  fixed                 releases every connection before any network I/O or sleep,
                        on every failure path (the default)
  commit-in-finally     ContextForge #1885 / PR #1886: a request whose client gives up
                        leaves its token-scoping session idle in transaction until
                        PostgreSQL's idle_in_transaction_session_timeout kills it
  commit-in-finally-rare
                        the same cleanup reached by one request in --rare-leak-every
                        (500): an error cancels the request before its cleanup, no
                        client gives up; a soak sees the climb (leakbench soak)
  held-while-waiting    wait_for_run keeps the request's authentication connection
                        while it polls (up to 30 s): the pool runs dry
  held-while-polling    its MCP 2026-07-28 Tasks twin: a wait_for_run task keeps the
                        connection it took at creation across every tasks/get poll,
                        until it completes (a cancelled or abandoned task: its TTL)
  held-across-upstream  ContextForge #2518 / #2323: call_upstream keeps a transaction
                        open while the upstream answers
  session-outside-request
                        ContextForge #1862: the token-usage write's own session is
                        closed only on the happy path; a token used again within a
                        second leaves it idle in transaction (needs --token-usage on
                        the fixed run for a fair comparison)

Logs go to stderr; SIGINT or SIGTERM stops the gateway.

`)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	if err := e.Err(); err != nil {
		return err
	}
	dsn, err := dsnFlag.Value()
	if err != nil {
		return err
	}
	if dsn == "" {
		return fmt.Errorf("%w: a DSN is required (%s)", cliflag.ErrUsage, dsnFlag.Sources())
	}
	if _, err := gateway.ParseVariants(*variant); err != nil {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	cfg := gateway.Config{DSN: dsn, Variant: *variant, Listen: *listen, PoolSize: *poolSize, PoolTimeout: *poolTimeout,
		RequestTimeout: *requestTimeout, Stateless: *stateless, JSONResponse: *jsonResp, UpstreamURL: *upstreamURL, UpstreamTimeout: *upstreamTimeout,
		RunDelay: *runDelay, PollInterval: *pollInterval, PageSize: *pageSize, MaxBodyBytes: *maxBody,
		SessionTimeout: *sessionTimeout, ReadHeaderTimeout: *readHeaderTimeout, BodyReadTimeout: *bodyReadTimeout,
		IdleTimeout: *idleTimeout, TokenUsage: *tokenUsage, RareLeakEvery: *rareLeakEvery, Logger: slog.New(slog.NewTextHandler(c.stderr, nil))}
	return servers.ServeGateway(ctx, cfg)
}
