package starter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// startStack starts the reference stack (PostgreSQL, PgBouncer, the
// upstream and the reference gateway) as local processes, small; it
// skips, with the reason, only when the servers are not installed.
func startStack(t *testing.T) *fixtures.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: starts PostgreSQL, PgBouncer and the reference gateway")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := fixtures.StartLocal(ctx, stack.Config{Users: 5, GatewayPoolSize: 5, PgBouncerPoolSize: 5, LogDir: t.TempDir()})
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("close stack: %v", err)
		}
	})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	return env
}

// TestInitReferenceGateway: against the reference gateway (bearer tokens,
// tools with required arguments, a tool that needs an id only another
// gives, resource templates, prompts), with its probe DSN, init writes a
// file that plays with no failure, and says what PostgreSQL showed.
func TestInitReferenceGateway(t *testing.T) {
	t.Parallel() // waits on servers, not on the CPU
	env := startStack(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// No token: the gateway refuses, and init says so (not "not MCP").
	if _, err := Init(ctx, Options{Target: env.GatewayURL}); err == nil || errors.Is(err, ErrNotMCP) || !strings.Contains(err.Error(), "refused the credentials") {
		t.Errorf("without a token: %v; want the credentials refused", err)
	}
	res, err := Init(ctx, Options{Target: env.GatewayURL, Token: env.Tokens[0], TryCalls: true, Timeout: 3 * time.Second, ProbeDSN: env.ProbeDSN})
	if err != nil {
		t.Fatal(err)
	}
	defer writeDebug(t, "starter-gateway.yaml", res.YAML)
	if testing.Verbose() {
		t.Logf("%s", res.YAML)
	}
	y := string(res.YAML)
	if strings.Contains(y, env.Tokens[0]) {
		t.Fatal("the file holds the bearer token")
	}
	if res.Database == nil || !res.Database.PgMonitor || res.Database.MaxConnections < 10 {
		t.Errorf("database findings %+v (%s); want the probe role's pg_monitor and max_connections", res.Database, res.DatabaseErr)
	}
	for _, want := range []string{
		"has pg_monitor",
		"idle_in_transaction_session_timeout",
		"max_connections = ",
		"Sessions connected, by application_name:",
		`name: "get_team_tools"`,
		`name: "record_note"`,
	} {
		if !strings.Contains(y, want) {
			t.Errorf("the file lacks %q", want)
		}
	}
	if len(res.Service.Tools) < 4 {
		t.Errorf("tools %+v", res.Service.Tools)
	}
	// The tools are the token's (the gateway scopes them by team): the
	// file plays as the user it was listed as.
	playStarter(t, res.YAML, env.GatewayURL, env.Tokens[:1])
}
