package runner

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/examples/pyservice"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/rundir"
	"github.com/leakbench/leakbench/internal/testenv"
	"github.com/leakbench/leakbench/reports"
)

// ownServiceProfile loads the Python service as a user would: each user
// starts a run of 2 s and waits for it, more users than its pool of 10
// has connections, with nothing but the database to look at (no PgBouncer,
// no pool metrics, no trace context in its SQL).
const ownServiceProfile = `
probe:
  interval: 100ms
  stuck_after: 1s
  drain: 4s
timeout: 10s
protocolVersion: auto
scenarios:
  waiters:
    executor: constant-vus
    vus: 14
    duration: 8s
    gracefulStop: 8s
    flow:
      - tools/call: { name: start_run, arguments: { seconds: 2 }, capture: { run: structuredContent.run_id } }
      - tools/call: { name: wait_for_run, arguments: { run_id: "{{vars.run}}", seconds: 6 } }
      - think: 100ms
`

// ownService is a real service of the users' stack (FastAPI + SQLAlchemy
// + psycopg2 under uvicorn) on its own database of a local PostgreSQL.
type ownService struct {
	env      *fixtures.Env
	dsn      string // the service's role, its database
	probeDSN string // pg_monitor, the service's database
	tokens   []string
}

func startOwnServiceStack(t *testing.T) *ownService {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: PostgreSQL and a Python service under load")
	}
	if _, err := pyservice.Check(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The service's own database has no idle_in_transaction_session_timeout:
	// the report must say "off".
	env, err := fixtures.StartLocal(ctx, fixtures.Config{NoGateway: true, Users: 1, IdleInTxTimeout: -1})
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Errorf("stop the stack: %v", err)
		}
	})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(t, "PostgreSQL not installed (run `make deps`): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := pyservice.CreateDatabase(ctx, env.PostgresDSN, "pyservice")
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := pyservice.Seed(ctx, dsn, 14)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(env.ProbeDSN)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/pyservice"
	return &ownService{env: env, dsn: dsn, probeDSN: u.String(), tokens: tokens}
}

// runOwnService starts the service's variant and runs leakbench against it
// in external mode, as `leakbench run --target … --probe-dsn … --name
// NAME` does, then renders the reports.
func runOwnService(t *testing.T, st *ownService, variant, name, probeDSN string) (dir string, sum *reports.Summary, groundTruth string) {
	t.Helper()
	groundTruth = filepath.Join(t.TempDir(), "groundtruth.jsonl")
	svc, err := pyservice.Start(context.Background(), pyservice.Options{DSN: st.dsn, Variant: variant, PoolSize: 10,
		PoolTimeout: 2 * time.Second, GroundTruth: groundTruth})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
	}()
	p, err := ParseProfile([]byte(ownServiceProfile), "own.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), name)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err = Run(ctx, Options{Profile: p, Name: name, Dir: dir, Env: fixtures.ProviderExternal, Version: "test",
		External: fixtures.External{GatewayURL: svc.URL, ProbeDSN: probeDSN, Tokens: st.tokens}})
	if err != nil {
		t.Fatalf("run against the service: %v", err)
	}
	if _, err := reports.RenderRun(dir); err != nil {
		t.Fatalf("render: %v", err)
	}
	return dir, sum, groundTruth
}

// TestOwnServiceSeenTruthfully: on a service nobody instrumented, the
// report names the service (not a reference variant), says only what was
// observed of its stack, calls held sessions held (not leaked), and sees
// from the database alone that the pool was pinned; the fixed service
// passes, and compare labels both by their names.
func TestOwnServiceSeenTruthfully(t *testing.T) {
	t.Setenv(reports.StepSummaryEnv, "")
	st := startOwnServiceStack(t)
	leakyDir, leaky, _ := runOwnService(t, st, pyservice.HeldWhileWaiting, "pyservice-leaky", st.probeDSN)
	fixedDir, fixed, _ := runOwnService(t, st, pyservice.Fixed, "pyservice-fixed", st.probeDSN)

	md := string(readFileT(t, filepath.Join(leakyDir, rundir.ReportFile)))
	headline, _, _ := strings.Cut(md, "\n")
	t.Logf("leaky: %s", headline)
	env := leaky.Environment
	if leaky.Name != "pyservice-leaky" || env.Variant != "" || env.Provider != "external" {
		t.Errorf("summary names the run %q, variant %q, provider %q; want the service's name, no variant, external", leaky.Name, env.Variant, env.Provider)
	}
	for _, want := range []string{
		"# leakbench run: pyservice-leaky — FAIL",
		"connections held:",                                 // released late by the service…
		"pool pinned: pyservice's connections pinned at 10", // …and the pool pinned, seen by the database
		"PgBouncer not probed",
		"service pool unknown",
		"idle_in_transaction_session_timeout off",
		"| Service connections (database view) | pyservice: max 10, pinned at 10 for",
		"all idle in transaction",
		"judged from the database's view",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, never := range []string{"(fixed)", "leak:", "connections leak", "slowness", "pool 40", "-0 ms", "not sampled |"} {
		if strings.Contains(md, never) {
			t.Errorf("report.md says %q, which was never observed or is the wrong word:\n%s", never, md)
		}
	}
	if strings.Contains(headline, "leaked") {
		t.Errorf("the headline calls held sessions leaked: %s", headline)
	}
	pool := leaky.Pool
	if pool == nil || !pool.Pinned || !pool.Exhausted || pool.JudgedFrom != "database view" || len(pool.Services) == 0 {
		t.Fatalf("pool %+v; want pinned, exhausted, judged from the database view", pool)
	}
	svc := pool.Services[0]
	if svc.Name != pyservice.ApplicationName || svc.Max != 10 || !svc.PinnedAllIdleInTx || svc.PinnedSeconds < 2 || svc.FailuresWhilePinned == 0 {
		t.Errorf("service %+v; want pyservice pinned at 10 for seconds, all idle in transaction, with requests failing meanwhile", svc)
	}
	t.Logf("leaky: %s pinned at %d for %.1f s (longest %.1f s), %d of %d requests failed meanwhile; %d held, %d leaked",
		svc.Name, svc.Max, svc.PinnedSeconds, svc.LongestPinnedSeconds, svc.FailuresWhilePinned, svc.RequestsWhilePinned,
		leaky.Forensics.SlowReleases, leaky.Forensics.Leaked)
	var points []rundir.LoadPoint
	for _, line := range strings.Split(strings.TrimSpace(string(readFileT(t, filepath.Join(leakyDir, rundir.LoadFile)))), "\n") {
		var p rundir.LoadPoint
		if json.Unmarshal([]byte(line), &p) == nil {
			points = append(points, p)
		}
	}
	if len(points) > 0 {
		t.Logf("load.jsonl: %d points, %s … %s", len(points), points[0].Time, points[len(points)-1].Time)
	}
	junit := string(readFileT(t, filepath.Join(leakyDir, rundir.JUnitFile)))
	if !strings.Contains(junit, `name="service pool not pinned (database view)"`) || !strings.Contains(junit, "pyservice-leaky") || strings.Contains(junit, "(fixed)") {
		t.Errorf("junit.xml does not fail the pinned check under the service's name:\n%s", junit)
	}

	if st, err := os.Stat(filepath.Join(leakyDir, rundir.PlotsDir, "services.png")); err != nil || st.Size() == 0 {
		t.Errorf("no plot of the backends per application: %v", err)
	}
	if os.Getenv("LEAKBENCH_KEEP_RUN") != "" {
		_ = os.CopyFS(os.Getenv("LEAKBENCH_KEEP_RUN"), os.DirFS(leakyDir))
	}
	fmd := string(readFileT(t, filepath.Join(fixedDir, rundir.ReportFile)))
	if !strings.HasPrefix(fmd, "# leakbench run: pyservice-fixed — PASS") || fixed.Pool == nil || fixed.Pool.Pinned {
		t.Errorf("the fixed service: %q, pool %+v; want PASS, not pinned", strings.SplitN(fmd, "\n", 2)[0], fixed.Pool)
	}

	before, err := reports.LoadRun(leakyDir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := reports.LoadRun(fixedDir)
	if err != nil {
		t.Fatal(err)
	}
	c := reports.CompareRuns(before, after)
	out := t.TempDir()
	if err := reports.RenderComparison(out, c); err != nil {
		t.Fatal(err)
	}
	cmd := string(readFileT(t, filepath.Join(out, rundir.ReportFile)))
	if !c.Pass || !strings.Contains(cmd, "| | before (`pyservice-leaky`) | after (`pyservice-fixed`) |") {
		t.Errorf("compare: pass %v, checks %+v:\n%s", c.Pass, c.Checks, cmd)
	}
}

// TestOwnServiceWrongDatabase: a probe DSN naming a database the service
// does not use sees no backend but its own; the run fails its check,
// naming the database, instead of passing as healthy.
func TestOwnServiceWrongDatabase(t *testing.T) {
	t.Setenv(reports.StepSummaryEnv, "")
	st := startOwnServiceStack(t)
	dir, sum, _ := runOwnService(t, st, pyservice.Fixed, "pyservice", st.env.ProbeDSN) // the stack's own database, not the service's
	md := string(readFileT(t, filepath.Join(dir, rundir.ReportFile)))
	headline, _, _ := strings.Cut(md, "\n")
	if !strings.Contains(headline, "FAIL") || !strings.Contains(headline, `no client backend but the probe's own in database "`+st.env.Database+`"`) {
		t.Errorf("headline %q; want a failure naming database %q", headline, st.env.Database)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Pool struct {
			MaxClientBackends *int `json:"max_client_backends"`
		} `json:"pool"`
	}
	if err := json.Unmarshal(raw, &back); err != nil || back.Pool.MaxClientBackends == nil || *back.Pool.MaxClientBackends != 0 {
		t.Errorf("summary.json pool.max_client_backends: %v (%v), want 0", back.Pool.MaxClientBackends, err)
	}
	_ = sum
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
