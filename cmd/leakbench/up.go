package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/redact"
)

// upInfo is what `leakbench up --json` prints: the stack's endpoints, with
// passwords and tokens masked unless --show-secrets.
type upInfo struct {
	Provider          string               `json:"provider"`
	Variant           string               `json:"variant,omitempty"`
	GatewayURL        string               `json:"gateway_url,omitempty"`
	GatewayMetricsURL string               `json:"gateway_metrics_url,omitempty"`
	UpstreamURL       string               `json:"upstream_url,omitempty"`
	PostgresDSN       string               `json:"postgres_dsn,omitempty"`
	ProbeDSN          string               `json:"probe_dsn,omitempty"`
	AppDSN            string               `json:"app_dsn,omitempty"`
	PgBouncerAdminDSN string               `json:"pgbouncer_admin_dsn,omitempty"`
	Database          string               `json:"database,omitempty"`
	PostgresVersion   string               `json:"postgres_version,omitempty"`
	PgBouncerVersion  string               `json:"pgbouncer_version,omitempty"`
	TokenCount        int                  `json:"token_count"`
	Tokens            []string             `json:"tokens,omitempty"`
	Docker            *fixtures.DockerInfo `json:"docker,omitempty"`
	Pid               int                  `json:"pid"`
	StartSeconds      float64              `json:"start_seconds"`
}

func cmdUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
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
	fs.StringVar(&ext.GatewayURL, "gateway-url", "", "the same as --target")
	fs.StringVar(&ext.GatewayMetricsURL, "metrics-url", "", "external: your gateway's Prometheus endpoint")
	fs.StringVar(&ext.GatewayMetricsURL, "scrape", "", "the same as --metrics-url")
	probeDSN := newSecretFlag(fs, "probe-dsn", "LEAKBENCH_PROBE_DSN", "external: `DSN` of a pg_monitor role on your PostgreSQL", "dsn")
	postgresDSN := newSecretFlag(fs, "postgres-dsn", "LEAKBENCH_POSTGRES_DSN", "external: admin `DSN` of your PostgreSQL (optional)")
	appDSN := newSecretFlag(fs, "app-dsn", "LEAKBENCH_APP_DSN", "external: your gateway's `DSN`, through PgBouncer (optional)")
	pgbouncerDSN := newSecretFlag(fs, "pgbouncer-admin-dsn", "LEAKBENCH_PGBOUNCER_ADMIN_DSN", "external: `DSN` of your PgBouncer's admin console (optional)", "pgbouncer")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, `Usage: leakbench up [--env auto|docker|local|external] [--variant V] [--json] [flags]

Starts PostgreSQL, PgBouncer, the reference gateway and the upstream service,
prints their endpoints and waits for Ctrl-C (or SIGTERM), then stops and
removes everything it started. --env docker runs them as containers on a
private network from images leakbench builds itself (see 'leakbench images');
--env external only checks your own endpoints and prints them.

`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, f := range []struct {
		dst  *string
		flag *secretFlag
	}{{&ext.ProbeDSN, probeDSN}, {&ext.PostgresDSN, postgresDSN}, {&ext.AppDSN, appDSN}, {&ext.PgBouncerAdminDSN, pgbouncerDSN}} {
		v, err := f.flag.Value()
		if err != nil {
			return err
		}
		*f.dst = v
	}
	if _, err := gateway.ParseVariants(*variant); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	cfg := fixtures.Config{Variant: *variant, Users: *users, IdleInTxTimeout: *iit, LogDir: *logDir}
	start := time.Now()
	env, err := fixtures.Start(ctx, cfg, fixtures.StartOptions{Provider: *provider, External: ext, Ports: ports, Log: os.Stderr})
	defer func() {
		if env == nil {
			return
		}
		if cerr := env.Close(); cerr != nil {
			fmt.Fprintf(os.Stderr, "leakbench: stopping the stack: %s\n", redact.String(cerr.Error()))
		}
	}()
	if err != nil {
		if ctx.Err() != nil {
			return runner.ErrInterrupted
		}
		return fmt.Errorf("start the stack: %w", err)
	}
	info := describeEnv(env, *showSecrets)
	info.StartSeconds = time.Since(start).Seconds()
	if *asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(info); err != nil {
			return err
		}
	} else {
		printEnvTable(os.Stdout, info)
	}
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "leakbench: stopping the stack…")
	return nil
}

func describeEnv(env *fixtures.Env, secrets bool) upInfo {
	dsn, url := redact.DSN, redact.URL
	if secrets {
		dsn = func(s string) string { return s }
		url = dsn
	}
	info := upInfo{
		Provider: env.Provider, GatewayURL: url(env.GatewayURL), GatewayMetricsURL: url(env.GatewayMetricsURL),
		UpstreamURL: url(env.UpstreamURL), PostgresDSN: dsn(env.PostgresDSN), ProbeDSN: dsn(env.ProbeDSN),
		AppDSN: dsn(env.AppDSN), PgBouncerAdminDSN: dsn(env.PgBouncerAdminDSN), Database: env.Database,
		PostgresVersion: env.PostgresVersion, PgBouncerVersion: env.PgBouncerVersion,
		TokenCount: len(env.Tokens), Docker: env.Docker(), Pid: os.Getpid(),
	}
	if env.Provider != fixtures.ProviderExternal {
		info.Variant = env.Config.Variant
	}
	if secrets {
		info.Tokens = env.Tokens
	}
	return info
}

func printEnvTable(w io.Writer, info upInfo) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(name, value string) {
		if value != "" {
			fmt.Fprintf(tw, "  %s\t%s\n", name, value)
		}
	}
	title := "leakbench stack (" + info.Provider
	if info.Variant != "" {
		title += ", variant " + info.Variant
	}
	fmt.Fprintf(tw, "%s), up in %.1fs — Ctrl-C stops it and removes everything it started\n", title, info.StartSeconds)
	row("gateway (MCP)", info.GatewayURL)
	row("gateway metrics", info.GatewayMetricsURL)
	row("upstream", info.UpstreamURL)
	row("postgres (admin)", info.PostgresDSN)
	row("postgres (probe)", info.ProbeDSN)
	row("pgbouncer (app)", info.AppDSN)
	row("pgbouncer (admin)", info.PgBouncerAdminDSN)
	if info.PostgresVersion != "" {
		row("versions", "PostgreSQL "+info.PostgresVersion+", "+info.PgBouncerVersion)
	}
	tokens := fmt.Sprintf("%d bearer tokens (masked; --show-secrets prints them)", info.TokenCount)
	if len(info.Tokens) > 0 {
		tokens = fmt.Sprintf("%d bearer tokens, first %s", info.TokenCount, info.Tokens[0])
	}
	row("tokens", tokens)
	if d := info.Docker; d != nil {
		row("docker", "docker ps -a --filter "+d.Filter)
	}
	if info.Provider == fixtures.ProviderExternal {
		row("note", "external: leakbench started nothing and will stop nothing")
	}
	_ = tw.Flush()
}
