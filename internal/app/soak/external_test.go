package soak

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/examples/pyservice"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/fixtures/fixturetest"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	judge "github.com/leakbench/leakbench/reports/soak"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// pyserviceSoak is a healthy constant load on the Python service: fewer
// users than its pool has connections, each starting a short run and
// waiting for it.
const pyserviceSoak = `
probe:
  interval: 200ms
  stuck_after: 1s
timeout: 10s
protocolVersion: auto
seed: 1
scenarios:
  waiters:
    executor: constant-vus
    vus: 6
    duration: 40s
    gracefulStop: 5s
    flow:
      - tools/call: { name: start_run, arguments: { seconds: 1 }, capture: { run: structuredContent.run_id } }
      - tools/call: { name: wait_for_run, arguments: { run_id: "{{vars.run}}", seconds: 3 } }
      - think: 200ms
`

// soakSettings are a scaled-down soak's, as TestSoakRareLeakAndFixed's.
var soakSettings = rundir.SoakSettings{Baseline: 3 * time.Second, Warmup: 8 * time.Second, CoolDown: 8 * time.Second, MinPoints: 20}

// soakExternal soaks a service leakbench did not start, as `leakbench soak
// --target URL --probe-dsn …` does.
func soakExternal(t *testing.T, profile string, ext fixtures.External) (*rundir.Summary, error) {
	t.Helper()
	p, err := profiles.Parse([]byte(profile), "soak test profile")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "soak")
	sum, err := Run(ctx, Options{Profile: p, Dir: dir, Env: fixtures.ProviderExternal, External: ext, Settings: soakSettings, Version: "test"})
	if sum != nil && sum.Soak != nil {
		for _, r := range sum.Soak.Resources {
			t.Logf("%s: %s", r.Name, r.Line)
		}
		if _, err := os.Stat(filepath.Join(dir, "plots", "soak.png")); err != nil {
			t.Errorf("the soak drew no plot: %v", err)
		}
	}
	return sum, err
}

// TestSoakExternalTarget soaks two services leakbench did not start, with
// the same probes as a run: the Python service's fixed build is judged
// flat; the reference gateway's rare leak (one request in 20 leaves its
// session idle in transaction) — started here, attached as the user's
// own service — growing. The Python service has no variant whose leak
// accumulates (its two leaks hold a connection for a request's length),
// so the growing case is the gateway's.
func TestSoakExternalTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: two 40 s soaks against services on a local PostgreSQL")
	}
	// Parallel, beside TestSoakRareLeakAndFixed: each soak mostly waits
	// out its 40 s of paced load, and the judge looks for a trend, which
	// a steady load beside it does not make.
	t.Parallel()
	// The two soaks beside each other too: 40 s each of waiting.
	t.Run("pyservice fixed is flat", func(t *testing.T) {
		t.Parallel()
		if _, err := pyservice.Check(); err != nil {
			testenv.Missing(t, "%v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		env := fixturetest.StartLocal(t, ctx, stack.Config{NoGateway: true, Users: 1, IdleInTxTimeout: -1})
		db, err := pyservice.SeedDatabase(ctx, env.PostgresDSN, env.ProbeDSN, "pyservice", 10)
		if err != nil {
			t.Fatal(err)
		}
		svc, err := pyservice.Start(context.Background(), pyservice.Options{DSN: db.DSN, Variant: pyservice.Fixed, PoolSize: 10})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := svc.Close(); err != nil {
				t.Error(err)
			}
		}()
		sum, err := soakExternal(t, pyserviceSoak, fixtures.External{GatewayURL: svc.URL, ProbeDSN: db.ProbeDSN, Tokens: db.Tokens})
		if err != nil || sum.Soak == nil || sum.Soak.Verdict != judge.Flat {
			t.Fatalf("soak of the fixed Python service: %v, want flat", err)
		}
		if sum.Environment.Provider != fixtures.ProviderExternal {
			t.Errorf("provider %q, want external", sum.Environment.Provider)
		}
	})
	t.Run("a rare leak grows", func(t *testing.T) {
		t.Parallel()
		p, err := profiles.Parse([]byte(testProfile), "soak test profile")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cfg := p.Stack
		cfg.Variant = "commit-in-finally-rare"
		env, err := fixtures.StartLocal(ctx, cfg)
		t.Cleanup(func() {
			if err := env.Close(); err != nil {
				t.Errorf("stop the stack: %v", err)
			}
		})
		if errors.Is(err, fixtures.ErrMissingBinary) {
			testenv.Missing(t, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		// Only what a user of their own service gives: no stack section.
		profile := testProfile[strings.Index(testProfile, "probe:"):]
		sum, err := soakExternal(t, profile, fixtures.External{GatewayURL: env.GatewayURL, ProbeDSN: env.ProbeDSN,
			PgBouncerAdminDSN: env.PgBouncerAdminDSN, GatewayMetricsURL: env.GatewayMetricsURL, Tokens: env.Tokens})
		if !errors.Is(err, ErrGrowing) || sum.Soak == nil || sum.Soak.Verdict != judge.Growing {
			t.Fatalf("soak of the rare leak: %v, want growing", err)
		}
		var grew bool
		for _, r := range sum.Soak.Resources {
			grew = grew || r.Verdict == judge.Growing && strings.HasPrefix(r.Name, "connections held (mcp-gateway")
		}
		if !grew {
			t.Error("the service's connections (database view) were not judged growing")
		}
	})
}

// TestSoakTargetNotAnswering: a soak target nobody listens on fails
// before the baseline and the load, saying it does not answer; no
// verdict is written.
func TestSoakTargetNotAnswering(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	p, err := profiles.Parse([]byte(pyserviceSoak), "soak test profile")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "soak")
	sum, err := Run(context.Background(), Options{Profile: p, Dir: dir, Env: fixtures.ProviderExternal,
		External: fixtures.External{GatewayURL: dead}, Settings: soakSettings})
	if err == nil || !strings.Contains(err.Error(), "does not answer") || !strings.Contains(err.Error(), "start the service or fix the URL") {
		t.Fatalf("soak: %v, want the target not answering", err)
	}
	if sum != nil && (sum.Soak != nil || sum.Load != nil || sum.EndReason == rundir.EndCompleted) {
		t.Errorf("a result was written: soak %+v, load %v, ended %s", sum.Soak, sum.Load != nil, sum.EndReason)
	}
	for _, f := range []string{rundir.ProcessFile, rundir.LoadFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written: %v", f, err)
		}
	}
}
