package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/leakbench/leakbench/gateway-under-test"
)

// envOr returns the environment variable's value, or def.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func cmdGateway(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	dsn := fs.String("dsn", envOr("LEAKBENCH_GATEWAY_DSN", ""), "PostgreSQL DSN of the application database, normally through PgBouncer (env LEAKBENCH_GATEWAY_DSN)")
	variant := fs.String("variant", envOr("LEAKBENCH_GATEWAY_VARIANT", "fixed"), "variant(s), comma-separated; known: "+gateway.VariantNames()+" (env LEAKBENCH_GATEWAY_VARIANT)")
	listen := fs.String("listen", envOr("LEAKBENCH_GATEWAY_LISTEN", "127.0.0.1:8080"), "address to serve on (env LEAKBENCH_GATEWAY_LISTEN)")
	defPool, _ := strconv.Atoi(envOr("LEAKBENCH_GATEWAY_POOL_SIZE", "20"))
	poolSize := fs.Int("pool-size", defPool, "size of the gateway's own connection pool (env LEAKBENCH_GATEWAY_POOL_SIZE)")
	poolTimeout := fs.Duration("pool-timeout", 30*time.Second, "how long a request waits for a pooled connection")
	stateless := fs.Bool("stateless", false, "serve MCP without sessions")
	jsonResp := fs.Bool("json-response", false, "answer with application/json instead of text/event-stream")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: leakbench gateway --dsn DSN [--variant V] [--listen ADDR]\n\nServes the reference MCP gateway at http://ADDR/mcp and its metrics at http://ADDR/metrics.\nThe database must hold leakbench's schema (see fixtures/schema.sql).\n\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dsn == "" {
		return fmt.Errorf("%w: --dsn (or LEAKBENCH_GATEWAY_DSN) is required", errUsage)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	gw, err := gateway.Start(ctx, gateway.Config{DSN: *dsn, Variant: *variant, Listen: *listen, PoolSize: *poolSize,
		PoolTimeout: *poolTimeout, Stateless: *stateless, JSONResponse: *jsonResp, Logger: log})
	if err != nil {
		return fmt.Errorf("start gateway: %w", err)
	}
	log.Info("gateway serving", "mcp", gw.URL(), "metrics", gw.MetricsURL(), "variant", gw.Variants().String())
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
