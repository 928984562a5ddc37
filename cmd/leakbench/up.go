package main

import (
	"context"
	"fmt"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/app/servers"
	"github.com/leakbench/leakbench/internal/lib/cliflag"
	"github.com/leakbench/leakbench/scenarios/stack"
)

func cmdUp(ctx context.Context, c *cli, args []string) error {
	fs := c.flagSet("up")
	provider := fs.String("env", fixtures.ProviderAuto, "who starts the stack: "+fixtures.ProviderNames+" (auto: docker when a Docker engine answers, else local)")
	variant := fs.String("variant", "fixed", "gateway variant; known: "+gateway.VariantNames())
	asJSON := fs.Bool("json", false, "print the endpoints as one JSON object instead of a table")
	showSecrets := fs.Bool("show-secrets", false, "print passwords and bearer tokens instead of masking them")
	users := fs.Int("users", 0, "seeded users, each with a bearer token (default 200)")
	iit := fs.Duration("idle-in-tx-timeout", 0, "PostgreSQL's idle_in_transaction_session_timeout (default 120s; negative: off)")
	logDir := fs.String("log-dir", "", "write the servers' logs into this directory when the stack stops")
	var ports fixtures.Ports
	fs.IntVar(&ports.Gateway, "gateway-port", 0, "docker: publish the gateway on this 127.0.0.1 port (default: a free one)")
	fs.IntVar(&ports.Postgres, "postgres-port", 0, "docker: publish PostgreSQL on this 127.0.0.1 port")
	fs.IntVar(&ports.PgBouncer, "pgbouncer-port", 0, "docker: publish PgBouncer on this 127.0.0.1 port")
	fs.IntVar(&ports.Upstream, "upstream-port", 0, "docker: publish the upstream on this 127.0.0.1 port")
	var ext fixtures.External
	fs.StringVar(&ext.GatewayURL, "target", "", "external: your gateway's MCP endpoint (http://127.0.0.1:PORT/mcp)")
	cliflag.Alias(fs, "gateway-url", "target")
	fs.StringVar(&ext.GatewayMetricsURL, "metrics-url", "", "external: your gateway's Prometheus endpoint")
	cliflag.Alias(fs, "scrape", "metrics-url")
	probeDSN := cliflag.NewSecret(fs, "probe-dsn", "LEAKBENCH_PROBE_DSN", "external: `DSN` of a pg_monitor role on your PostgreSQL", "dsn")
	postgresDSN := cliflag.NewSecret(fs, "postgres-dsn", "LEAKBENCH_POSTGRES_DSN", "external: admin `DSN` of your PostgreSQL (optional)")
	appDSN := cliflag.NewSecret(fs, "app-dsn", "LEAKBENCH_APP_DSN", "external: your gateway's `DSN`, through PgBouncer (optional)")
	pgbouncerDSN := cliflag.NewSecret(fs, "pgbouncer-admin-dsn", "LEAKBENCH_PGBOUNCER_ADMIN_DSN", "external: `DSN` of your PgBouncer's admin console (optional)", "pgbouncer")
	for _, s := range []*cliflag.Secret{probeDSN, postgresDSN, appDSN, pgbouncerDSN} {
		s.Getenv = c.getenv // the cli's environment
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: leakbench up [--env auto|docker|local|external] [--variant V] [--json] [flags]

Starts PostgreSQL, PgBouncer, the reference gateway and the upstream service,
prints their endpoints and waits for Ctrl-C (or SIGTERM), then stops and
removes everything it started. --env docker runs them as containers on a
private network from images leakbench builds itself (see 'leakbench images');
--env external only checks your own endpoints and prints them.

`)
		printFlags(fs.Output(), fs)
	}
	if err := cliflag.Parse(fs, args); err != nil {
		return err
	}
	for _, f := range []struct {
		dst  *string
		flag *cliflag.Secret
	}{{&ext.ProbeDSN, probeDSN}, {&ext.PostgresDSN, postgresDSN}, {&ext.AppDSN, appDSN}, {&ext.PgBouncerAdminDSN, pgbouncerDSN}} {
		v, err := f.flag.Value()
		if err != nil {
			return err
		}
		*f.dst = v
	}
	if _, err := gateway.ParseVariants(*variant); err != nil {
		return fmt.Errorf("%w: %w", cliflag.ErrUsage, err)
	}
	return servers.Up(ctx, servers.UpOptions{
		Stack:    stack.Config{Variant: *variant, Users: *users, IdleInTxTimeout: *iit, LogDir: *logDir},
		Provider: *provider, External: ext, Ports: ports, JSON: *asJSON, ShowSecrets: *showSecrets,
		Stdout: c.stdout, Stderr: c.stderr,
	})
}
