package runner

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/fixtures/fixturetest"
	"github.com/leakbench/leakbench/scenarios/profiles"
	"github.com/leakbench/leakbench/scenarios/stack"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/examples/pyservice"
	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/forensics"
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
	env := fixturetest.StartLocal(t, ctx, stack.Config{NoGateway: true, Users: 1, IdleInTxTimeout: -1})
	db, err := pyservice.SeedDatabase(ctx, env.PostgresDSN, env.ProbeDSN, "pyservice", 30)
	if err != nil {
		t.Fatal(err)
	}
	return &ownService{env: env, dsn: db.DSN, probeDSN: db.ProbeDSN, tokens: db.Tokens}
}

// runOwnService starts the service's variant and runs leakbench against it
// in external mode, as `leakbench run --target … --probe-dsn … --name
// NAME` does, then renders the reports.
func runOwnService(t *testing.T, st *ownService, variant, name, probeDSN string) (dir string, sum *rundir.Summary, groundTruth string) {
	return runOwnServiceWith(t, st, variant, name, probeDSN, ownServiceProfile, 2*time.Second)
}

func runOwnServiceWith(t *testing.T, st *ownService, variant, name, probeDSN, profile string, poolTimeout time.Duration) (dir string, sum *rundir.Summary, groundTruth string) {
	t.Helper()
	groundTruth = filepath.Join(t.TempDir(), "groundtruth.jsonl")
	svc, err := pyservice.Start(context.Background(), pyservice.Options{DSN: st.dsn, Variant: variant, PoolSize: 10,
		PoolTimeout: poolTimeout, GroundTruth: groundTruth})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
	}()
	p, err := profiles.Parse([]byte(profile), "own.yaml")
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
	t.Parallel() // waits on its servers and the clock, not on the CPU
	st := startOwnServiceStack(t)
	leakyDir, leaky, groundTruth := runOwnService(t, st, pyservice.HeldWhileWaiting, "pyservice-leaky", st.probeDSN)
	measureTokenJoin(t, leakyDir, groundTruth, leaky)
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

// starvedProfile is the own-service load under pressure: three users for
// each connection, a client timeout shorter than the service's wait for a
// connection, so that the service holds sessions for requests their
// clients gave up on — the case where timing alone misattributes.
const starvedProfile = `
probe:
  interval: 100ms
  stuck_after: 1s
  drain: 6s
timeout: 3s
protocolVersion: auto
scenarios:
  waiters:
    executor: constant-vus
    vus: 30
    duration: 10s
    gracefulStop: 5s
    flow:
      - tools/call: { name: start_run, arguments: { seconds: 2 }, capture: { run: structuredContent.run_id } }
      - tools/call: { name: wait_for_run, arguments: { run_id: "{{vars.run}}", seconds: 6 } }
      - think: 50ms
`

// TestOwnServiceTokenJoinUnderPressure measures the token join where
// sessions outlive the requests that took them.
func TestOwnServiceTokenJoinUnderPressure(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	st := startOwnServiceStack(t)
	dir, sum, groundTruth := runOwnServiceWith(t, st, pyservice.HeldWhileWaiting, "pyservice-starved", st.probeDSN, starvedProfile, 5*time.Second)
	measureTokenJoin(t, dir, groundTruth, sum)
}

// TestOwnServiceWrongDatabase: a probe DSN naming a database the service
// does not use sees no backend but its own; the run fails its check,
// naming the database, instead of passing as healthy.
func TestOwnServiceWrongDatabase(t *testing.T) {
	t.Parallel() // waits on its servers and the clock, not on the CPU
	st := startOwnServiceStack(t)
	waitNoClients(t, st.env.PostgresDSN, st.env.Database)
	dir, _, _ := runOwnService(t, st, pyservice.Fixed, "pyservice", st.env.ProbeDSN) // the stack's own database, not the service's
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
}

// waitNoClients waits until the database has no client backend left but
// the one asking: the connections that seeded it and created the
// service's database exit asynchronously, and on a loaded machine one
// may still be there when the probe starts, which would pass for the
// service's own.
func waitNoClients(t *testing.T, dsn, database string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Asked from another database: this connection's own exit must not
	// be the one the probe sees.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/postgres"
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`, database).Scan(&n)
		if err != nil {
			t.Fatalf("count the client backends of %s: %v", database, err)
		}
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d client backends still in %s after 20 s", n, database)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// measureTokenJoin measures the join of stuck sessions to requests by the
// bearer token their query carried against the service's own record of
// which request held which backend (its ground-truth log, psycopg2's
// get_backend_pid at each pool checkout): the users are named exactly;
// the one request of those users in flight when the session went idle in
// transaction is the request that left it only so often, which is why the
// report calls it a candidate.
func measureTokenJoin(t *testing.T, dir, groundTruth string, sum *rundir.Summary) {
	t.Helper()
	cos, err := pyservice.ReadGroundTruth(groundTruth)
	if err != nil {
		t.Fatal(err)
	}
	atts, err := forensics.TokenAttributions(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := sum.Forensics
	if f == nil || f.StuckEpisodes == 0 || f.SentByToken != len(atts) {
		t.Fatalf("forensics %+v, %d token attributions", f, len(atts))
	}
	// The checkout that held the backend when the episode began.
	holder := func(a forensics.TokenAttribution) *pyservice.Checkout {
		for i := range cos {
			c := &cos[i]
			if c.Pid == int(a.PID) && !c.CheckedOut.After(a.Start.Add(10*time.Millisecond)) &&
				(c.CheckedIn.IsZero() || !c.CheckedIn.Before(a.Start)) && c.Request != nil {
				return c
			}
		}
		return nil
	}
	var usersRight, usersWrong, joined, joinedRight, one, oneRight, several, none, unknown int
	for _, a := range atts {
		c := holder(a)
		if c == nil {
			unknown++
			continue
		}
		if c.Request.User == pyservice.UserEmail(a.Token) {
			usersRight++
		} else {
			usersWrong++
		}
		right := false
		if tp := strings.Split(c.Request.Traceparent, "-"); len(tp) == 4 && tp[1] == a.Request.TraceID {
			right = true
		}
		switch a.Candidates {
		case 0:
			none++
		case 1:
			one++
			if right {
				oneRight++
			}
		default:
			several++
		}
		if a.Joined {
			joined++
			if right {
				joinedRight++
			}
		}
	}
	precision := func(right, of int) float64 {
		if of == 0 {
			return 0
		}
		return 100 * float64(right) / float64(of)
	}
	t.Logf("token join: %d of %d stuck episodes carried a sent token; users named right %d, wrong %d (%.1f%%), no ground truth %d; "+
		"one request in flight %d (the one that held the backend: %d, %.1f%%), several %d, none %d; "+
		"joined (one in flight, no earlier request given up) %d of %d (coverage %.1f%%), right %d (precision %.1f%%)",
		len(atts), f.StuckEpisodes, usersRight, usersWrong, precision(usersRight, usersRight+usersWrong), unknown,
		one, oneRight, precision(oneRight, one), several, none,
		joined, f.StuckEpisodes, precision(joined, f.StuckEpisodes), joinedRight, precision(joinedRight, joined))
	if joined > 0 && precision(joinedRight, joined) < 95 {
		t.Errorf("the token join's precision is %.1f%% (%d of %d), below the 95%% it must reach to be printed", precision(joinedRight, joined), joinedRight, joined)
	}
	// The users are exact: the token is theirs alone.
	if len(atts) == 0 || usersWrong != 0 || usersRight < len(atts)*9/10 {
		t.Errorf("the token names the users: %d right, %d wrong, %d without ground truth of %d", usersRight, usersWrong, unknown, len(atts))
	}
	if f.TokenJoined != joined || f.TokenNoCandidate != none || f.TokenJoined+f.TokenAmbiguous+f.TokenNoCandidate != len(atts) {
		t.Errorf("summary's token counts joined %d, ambiguous %d, none %d; the join's joined %d, none %d of %d", f.TokenJoined, f.TokenAmbiguous, f.TokenNoCandidate, joined, none, len(atts))
	}
}

func readFileT(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
