package servers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// UpOptions configures leakbench up.
type UpOptions struct {
	Stack stack.Config
	// Provider starts the stack: auto, docker, local or external.
	Provider string
	// External are the user's endpoints for the external provider.
	External fixtures.External
	// Ports are the docker provider's published ports.
	Ports fixtures.Ports
	// JSON prints the endpoints as one JSON object instead of a table;
	// ShowSecrets prints passwords and bearer tokens instead of masking
	// them.
	JSON, ShowSecrets bool
	// Stdout gets the endpoints, Stderr the progress (nil: discarded).
	Stdout, Stderr io.Writer
}

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

// Up starts a stack, prints its endpoints and waits until ctx is done;
// then it stops and removes everything it started. A start that ctx cut
// short is runner.ErrInterrupted.
func Up(ctx context.Context, o UpOptions) error {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	start := time.Now()
	env, err := fixtures.Start(ctx, o.Stack, fixtures.StartOptions{Provider: o.Provider, External: o.External, Ports: o.Ports, Log: o.Stderr})
	defer func() {
		if env == nil {
			return
		}
		if cerr := env.Close(); cerr != nil {
			fmt.Fprintf(o.Stderr, "leakbench: stopping the stack: %s\n", redact.String(cerr.Error()))
		}
	}()
	if err != nil {
		if ctx.Err() != nil {
			return runner.ErrInterrupted
		}
		return fmt.Errorf("start the stack: %w", err)
	}
	info := describeEnv(env, o.ShowSecrets)
	info.StartSeconds = time.Since(start).Seconds()
	if o.JSON {
		if err := json.NewEncoder(o.Stdout).Encode(info); err != nil {
			return err
		}
	} else {
		printEnvTable(o.Stdout, info)
	}
	<-ctx.Done()
	fmt.Fprintln(o.Stderr, "leakbench: stopping the stack…")
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
