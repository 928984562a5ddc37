package probes

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/jsonl"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/pgshared"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/probes/poolmetrics"
	"github.com/leakbench/leakbench/probes/querytext"
	"github.com/leakbench/leakbench/scenarios/stack"
)

// stuckSQL is the statement the test sessions sit idle after: the
// incident's token-scoping lookup.
const stuckSQL = `SELECT 1 FROM email_team_members WHERE user_email = 'x'`

// The integration stack: idle_in_transaction_session_timeout 5 s (longer
// than the 4 s span the accuracy test holds), and a PgBouncer pool of 5
// server connections so that 6 clients in transactions exhaust it.
const (
	stackTimeout  = 5 * time.Second
	stackPoolSize = 5
)

// startStack starts a stack as cfg says on the package's shared PostgreSQL
// (pgshared: TestMain): a database of its own, cloned from a seeded
// template, with its own PgBouncer and gateway. The probe watches one
// database, so stacks on one server do not see each other's sessions.
func startStack(tb testing.TB, cfg stack.Config) *fixtures.Env {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: starts PostgreSQL and PgBouncer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return pgshared.Start(tb, ctx, cfg)
}

// startOwnStack starts a stack with a PostgreSQL of its own, for a test
// that does to the server what others must not see: crash-restarts it,
// terminates backends by application name, or measures the postmaster's
// CPU.
func startOwnStack(tb testing.TB, cfg stack.Config) *fixtures.Env {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: starts PostgreSQL and PgBouncer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	env, err := fixtures.StartLocal(ctx, cfg)
	tb.Cleanup(func() {
		if err := env.Close(); err != nil {
			tb.Errorf("close stack: %v", err)
		}
	})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		testenv.Missing(tb, "PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
	}
	if err != nil {
		tb.Fatalf("start stack: %v", err)
	}
	return env
}

func connect(tb testing.TB, ctx context.Context, dsn string) *pgx.Conn {
	tb.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		tb.Fatalf("parse DSN: %v", err)
	}
	// PgBouncer 1.18 in transaction mode: no named prepared statements.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// session is a client sitting idle in transaction after stuckSQL.
type session struct {
	conn      *pgx.Conn
	pid       int32
	idleSince time.Time // client clock: stuckSQL returned
	start     time.Time // server: state_change into idle in transaction
}

func openIdleSession(t *testing.T, ctx context.Context, env *fixtures.Env, observer *pgx.Conn) *session {
	t.Helper()
	s := &session{conn: connect(t, ctx, env.AppDSN)}
	if _, err := s.conn.Exec(ctx, "BEGIN"); err != nil {
		t.Fatalf("BEGIN: %v", err)
	}
	if err := s.conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&s.pid); err != nil {
		t.Fatalf("backend pid: %v", err)
	}
	if _, err := s.conn.Exec(ctx, stuckSQL); err != nil {
		t.Fatalf("stuck query: %v", err)
	}
	s.idleSince = time.Now()
	var state string
	s.start, state = backendState(t, ctx, observer, s.pid)
	if state != stateIdleInTx {
		t.Fatalf("backend %d: state %q after the SELECT, want %q", s.pid, state, stateIdleInTx)
	}
	return s
}

// backendState reads a backend's state_change and state directly from the
// server (superuser connection, autocommit).
func backendState(t *testing.T, ctx context.Context, observer *pgx.Conn, pid int32) (time.Time, string) {
	t.Helper()
	var sc time.Time
	var state string
	err := observer.QueryRow(ctx, "SELECT state_change, state FROM pg_stat_activity WHERE pid = $1", pid).Scan(&sc, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, ""
	}
	if err != nil {
		t.Fatalf("read backend %d: %v", pid, err)
	}
	return sc.UTC(), state
}

// commitAfter commits once the session has been idle for span (client
// clock) and returns the server's idle-in-transaction span: state_change of
// the now idle backend minus the episode's start.
func commitAfter(t *testing.T, ctx context.Context, observer *pgx.Conn, s *session, span time.Duration) time.Duration {
	t.Helper()
	time.Sleep(time.Until(s.idleSince.Add(span)))
	slept := time.Since(s.idleSince)
	if _, err := s.conn.Exec(ctx, "COMMIT"); err != nil {
		t.Fatalf("COMMIT: %v", err)
	}
	end, state := backendState(t, ctx, observer, s.pid)
	if state != stateIdle {
		t.Fatalf("backend %d after COMMIT: state %q, want idle (reused by another client?)", s.pid, state)
	}
	held := end.Sub(s.start)
	// The server's idle span contains the client's sleep: state_change is
	// set before the SELECT's result leaves and the COMMIT arrives after the
	// sleep. It exceeds it by two loopback hops through PgBouncer and the
	// COMMIT itself; 100 ms is room for scheduling on a busy 2-core box.
	if held < slept || held > slept+100*time.Millisecond {
		t.Fatalf("backend %d: server span %s, client slept %s: the clocks disagree", s.pid, held, slept)
	}
	return held
}

// readJSONL parses every complete line of path; a last line without its
// newline is an interrupted write and is skipped, as FORMAT.md says.
func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	v, err := jsonl.ReadFile[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitFor polls cond every 10 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
	}
}

func httpGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", u, resp.Status, err)
	}
	return string(b)
}

func mustURL(t *testing.T, dsn string) *url.URL {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("DSN is not a URL: %v", err)
	}
	return u
}

// TestPollerOnStack runs the probe against a real PostgreSQL, PgBouncer and
// the reference gateway, started once for all subtests.
func TestPollerOnStack(t *testing.T) {
	// Its own server: "postgres crash restart" kills a backend, which
	// restarts the whole server, and "probe connection terminated"
	// terminates backends by application name. Serial: "accuracy" and
	// "pool exhaustion" assert spans and waits against the clock.
	env := startOwnStack(t, stack.Config{IdleInTxTimeout: stackTimeout, PgBouncerPoolSize: stackPoolSize, Users: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	observer := connect(t, ctx, env.PostgresDSN)

	t.Run("least privilege", func(t *testing.T) { testLeastPrivilege(t, ctx, env, observer) })
	t.Run("accuracy", func(t *testing.T) { testAccuracy(t, ctx, env, observer) })
	t.Run("states", func(t *testing.T) { testStates(t, ctx, env, observer) })
	t.Run("pool exhaustion", func(t *testing.T) { testExhaustion(t, ctx, env) })
	t.Run("bad input", func(t *testing.T) { testBadInput(t, ctx, env) })
	t.Run("killed run", func(t *testing.T) { testKilledRun(t, ctx, env, observer) })
	t.Run("probe connection terminated", func(t *testing.T) { testTerminated(t, ctx, env, observer) })
	t.Run("slow and stalled reads", func(t *testing.T) { testSlowReads(t, ctx, env) })
	t.Run("pgbouncer and scrape target restart", func(t *testing.T) { testRestarts(t, ctx, env) })
	// Last: it restarts PostgreSQL, which drops every connection.
	t.Run("postgres crash restart", func(t *testing.T) { testPostgresRestart(t, ctx, env) })
}

// testAccuracy holds sessions idle in transaction through PgBouncer for
// known spans and checks what the probe makes of them.
func testAccuracy(t *testing.T, ctx context.Context, env *fixtures.Env, observer *pgx.Conn) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const interval = 100 * time.Millisecond
	runDir := t.TempDir()
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN, RunDir: runDir,
		Scrape: []poolmetrics.Target{{URL: env.GatewayMetricsURL}}, MetricsAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	if got := p.IdleInTxTimeout(); got != stackTimeout || p.Config().Interval != interval || p.Config().Database != env.Database {
		t.Fatalf("IdleInTxTimeout %s, interval %s, database %q; want %s, %s (the default), %q",
			got, p.Config().Interval, p.Config().Database, stackTimeout, interval, env.Database)
	}
	// The shortest opens last, so that its 300 ms overlap the other three
	// whole (the samples must see four idle in transaction at once): opened
	// first, on a loaded machine the opening of the other three took most
	// of its span, and no sample saw the four.
	longer := openIdleSession(t, ctx, env, observer)
	leaked := openIdleSession(t, ctx, env, observer)
	long := openIdleSession(t, ctx, env, observer)
	short := openIdleSession(t, ctx, env, observer)
	shortHeld := commitAfter(t, ctx, observer, short, 300*time.Millisecond)
	longHeld := commitAfter(t, ctx, observer, long, 1500*time.Millisecond)
	// While two are stuck, the probe's own metrics say so. The probe sees
	// the ends at its next sample, 100 ms on; 3 s is room for a machine
	// whose other test packages load both cores (CI saw 1 s pass by).
	waitFor(t, 3*time.Second, "the probe to see two episodes end", func() bool { return p.Status().Episodes == 2 })
	// The episodes are counted as a sample ends them, the gauges when the
	// sample is kept, a moment later: the metrics say so by the next one.
	var metrics string
	waitFor(t, 3*time.Second, "/metrics to show the two stuck", func() bool {
		metrics = httpGet(t, p.MetricsURL())
		return strings.Contains(metrics, "leakbench_probe_stuck_idle_in_transaction_sessions 2")
	})
	for _, want := range []string{"leakbench_probe_stuck_idle_in_transaction_sessions 2", "leakbench_probe_pgbouncer_clients_waiting 0",
		"leakbench_probe_pgbouncer_max_wait_seconds", "leakbench_probe_release_latency_seconds_bucket", `leakbench_probe_episodes_total{end_reason="released"} `} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
	// The test's two, and any the stack's own gateway left meanwhile (a
	// transaction of milliseconds, now and then).
	if n := metricValue(metrics, `leakbench_probe_episodes_total{end_reason="released"}`); n < 2 {
		t.Errorf("/metrics counts %v released episodes, want at least the test's 2", n)
	}
	// The status lists the culprit live (a dashboard's table), as of the
	// last second: the stuck one of the two (held 1.5 s).
	waitFor(t, 2*time.Second, "the status to list the test's culprit", func() bool {
		return slices.ContainsFunc(p.Status().Culprits, func(c rundir.Culprit) bool {
			return c.Fingerprint == querytext.Fingerprint(stuckSQL) && c.Episodes == 1 && c.MaxHoldSeconds >= 1
		})
	})
	if st := p.Status(); st.Sample.OldestIdleInTx == nil || st.Sample.OldestIdleInTx.Fingerprint != querytext.Fingerprint(stuckSQL) || st.AppPool == nil {
		t.Errorf("status %+v: want the oldest episode with its fingerprint and the gateway's pool", st)
	}
	longerHeld := commitAfter(t, ctx, observer, longer, 4*time.Second)
	// The leaked session is killed by the server's timeout.
	waitFor(t, stackTimeout+3*time.Second, "leaked backend killed by idle_in_transaction_session_timeout", func() bool {
		_, state := backendState(t, ctx, observer, leaked.pid)
		return state == ""
	})
	// PostgreSQL counts the fatal session end when the backend has
	// exited, which can come after it left pg_stat_activity on a loaded
	// machine; the probe reads pg_stat_database once a second, so it
	// confirms the timeout only with a read after that (the assertion on
	// TimeoutUnconfirmed below). Wait for the count, then for a read.
	waitFor(t, 5*time.Second, "pg_stat_database to count the timeout's fatal session end", func() bool {
		var fatal int64
		err := observer.QueryRow(ctx, "SELECT sessions_fatal FROM pg_stat_database WHERE datname = current_database()").Scan(&fatal)
		return err == nil && fatal >= 1
	})
	time.Sleep(time.Second + 3*interval) // let the probe notice
	if m := httpGet(t, p.MetricsURL()); !strings.Contains(m, `leakbench_probe_episodes_total{end_reason="timeout"} 1`) {
		t.Errorf("/metrics: no timeout episode:\n%s", m)
	}
	sum, err := p.Stop()
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}

	all := readJSONL[rundir.Episode](t, filepath.Join(runDir, rundir.EpisodesFile))
	// The test's sessions' episodes; the gateway of the stack may leave a
	// few of milliseconds meanwhile, which are not what this measures.
	var eps []rundir.Episode
	for _, e := range all {
		for _, s := range []*session{short, long, longer, leaked} {
			if e.PID == s.pid && e.Start.Equal(s.start) {
				eps = append(eps, e)
			}
		}
	}
	t.Logf("server spans: %s, %s, %s; episodes: %+v", shortHeld, longHeld, longerHeld, eps)
	if len(eps) != 4 || sum.Episodes != len(all) || sum.StuckEpisodes != 3 {
		t.Fatalf("want the test's 4 episodes (3 stuck), summary says %d (%d stuck), file has %d, the test's %d: %+v", sum.Episodes, sum.StuckEpisodes, len(all), len(eps), all)
	}
	find := func(s *session) rundir.Episode {
		for _, e := range eps {
			if e.PID == s.pid && e.Start.Equal(s.start) {
				return e
			}
		}
		t.Fatalf("no episode for backend %d starting %s: %+v", s.pid, s.start, eps)
		return rundir.Episode{}
	}
	for _, c := range []struct {
		name string
		s    *session
		held time.Duration
	}{{"0.3 s", short, shortHeld}, {"1.5 s", long, longHeld}, {"4 s", longer, longerHeld}} {
		e := find(c.s)
		if e.EndReason != rundir.EndReleased || !e.EndExact {
			t.Errorf("%s: reason %q exact %v, want released, exact", c.name, e.EndReason, e.EndExact)
		}
		if d := math.Abs(e.HoldSeconds - c.held.Seconds()); d > 0.005 {
			t.Errorf("%s: hold %.6fs, server says %.6fs (off by %.1f ms)", c.name, e.HoldSeconds, c.held.Seconds(), d*1000)
		}
		if e.Query != querytext.Mask(stuckSQL) || e.Fingerprint != querytext.Fingerprint(stuckSQL) || e.Aborted {
			t.Errorf("%s: query %q fingerprint %q aborted %v; want the masked query", c.name, e.Query, e.Fingerprint, e.Aborted)
		}
		if stuck := c.held >= time.Second; stuck != (e.PgBouncer != nil) {
			t.Errorf("%s: PgBouncer link %+v; want one exactly for stuck episodes", c.name, e.PgBouncer)
		}
	}
	e := find(leaked)
	if e.EndReason != rundir.EndTimeout || e.EndExact {
		t.Errorf("leaked: reason %q exact %v, want timeout, not exact", e.EndReason, e.EndExact)
	}
	if d := math.Abs(e.HoldSeconds - stackTimeout.Seconds()); d > interval.Seconds() {
		t.Errorf("leaked: hold %.3fs, want %s ± %s", e.HoldSeconds, stackTimeout, interval)
	}
	if l := e.PgBouncer; l == nil || l.ServerLocalPort == 0 || l.User != "mcp_app" || l.ClientAddr != "127.0.0.1" || l.ClientPort == 0 {
		t.Errorf("leaked: PgBouncer link %+v, want the server and its client", l)
	}

	if sum.StuckEpisodes != 3 || sum.TimeoutTerminated != 1 || sum.FailedSamples != 0 || sum.StuckEpisodesLinked != 3 {
		t.Errorf("stuck %d (linked %d), timeout %d, failed samples %d; want 3 (3), 1, 0", sum.StuckEpisodes, sum.StuckEpisodesLinked, sum.TimeoutTerminated, sum.FailedSamples)
	}
	if sum.MaxIdleInTx < 4 || sum.MaxStuckIdleInTx < 3 {
		t.Errorf("max idle in tx %d, max stuck %d; want ≥ 4, ≥ 3", sum.MaxIdleInTx, sum.MaxStuckIdleInTx)
	}
	if len(sum.Culprits) == 0 || sum.Culprits[0].Fingerprint != querytext.Fingerprint(stuckSQL) || sum.Culprits[0].Episodes != 3 || sum.Culprits[0].AppClientAddr != "127.0.0.1" {
		t.Errorf("culprits %+v, want first %q with 3 episodes", sum.Culprits, querytext.Fingerprint(stuckSQL))
	}
	// pg_stat_database agrees: the timeout is a fatal session end, and the
	// three commits (and more) were counted.
	// PostgreSQL publishes a backend's idle_in_transaction_time up to a
	// second after the transaction ends; the 4 s one ended over a second
	// before Stop.
	if !sum.DatabaseSampled || sum.SessionsFatalTotal < 1 || sum.TimeoutUnconfirmed != 0 || sum.XactCommitTotal < 3 || sum.IdleInTxSecondsTotal < 4 {
		t.Errorf("pg_stat_database: sampled %v, fatal %d, unconfirmed %d, commits %d, idle in tx %.1fs; want true, ≥1, 0, ≥3, ≥ 4s",
			sum.DatabaseSampled, sum.SessionsFatalTotal, sum.TimeoutUnconfirmed, sum.XactCommitTotal, sum.IdleInTxSecondsTotal)
	}
	if sum.PgBouncerPoolSize != stackPoolSize {
		t.Errorf("PgBouncer pool_size %d, want the stack's %d", sum.PgBouncerPoolSize, stackPoolSize)
	}
	if !sum.PgBouncerSampled || sum.PgBouncerXactsTotal < 3 || sum.PoolExhausted {
		t.Errorf("PgBouncer: sampled %v, xacts %d, exhausted %v; want true, ≥ 3, false", sum.PgBouncerSampled, sum.PgBouncerXactsTotal, sum.PoolExhausted)
	}
	if !sum.AppPoolSampled || sum.AppPoolMax != 40 {
		t.Errorf("gateway pool: sampled %v, max %g; want true, 40", sum.AppPoolSampled, sum.AppPoolMax)
	}

	samples := readJSONL[rundir.Sample](t, filepath.Join(runDir, rundir.SamplesFile))
	if len(samples) != sum.Samples || sum.Samples < 45 {
		t.Errorf("%d samples in the file, %d in the summary, want the same and ≥ 45 (5 s at 100 ms)", len(samples), sum.Samples)
	}
	var busy bool // all four sessions in a transaction, each on a server
	var appPools int
	for _, s := range samples {
		busy = busy || s.PgBouncer != nil && s.PgBouncer.SvActive >= 4 && s.PgBouncer.ClActive >= 4 && s.States.IdleInTx >= 4
		if s.AppPool != nil {
			appPools++
		}
	}
	if !busy {
		t.Error("no sample saw 4 PgBouncer servers active and 4 backends idle in transaction")
	}
	if secs := samples[len(samples)-1].Time.Sub(samples[0].Time).Seconds(); appPools < int(secs)-1 || appPools > int(secs)+2 {
		t.Errorf("%d samples carry the gateway's pool over %.1fs; want one a second", appPools, secs)
	}
}

// testExhaustion fills PgBouncer's pool with clients idle in transaction
// so that one more client waits.
func testExhaustion(t *testing.T, ctx context.Context, env *fixtures.Env) {
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	var holders []*pgx.Conn
	for range stackPoolSize {
		c := connect(t, ctx, env.AppDSN)
		for _, q := range []string{"BEGIN", stuckSQL} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		holders = append(holders, c)
	}
	waiter := connect(t, ctx, env.AppDSN)
	done := make(chan error, 1)
	go func() { _, err := waiter.Exec(ctx, "SELECT 1"); done <- err }()
	waitFor(t, 5*time.Second, "a client waiting in PgBouncer", func() bool {
		s := p.Snapshot()
		return s.PgBouncer != nil && s.PgBouncer.ClWaiting > 0
	})
	time.Sleep(time.Second)
	if _, err := holders[0].Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting client: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	sum, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if !sum.PoolExhausted || sum.PoolExhaustedSpans != 1 || sum.PoolExhaustedSeconds < 0.9 || sum.PoolExhaustedSeconds > 2 ||
		sum.PgBouncerMaxClWaiting != 1 || sum.PgBouncerMaxWaitSeconds < 0.9 || sum.PgBouncerWaitSecondsTotal < 0.9 {
		t.Errorf("exhausted %v in %d spans for %.2fs, max cl_waiting %d, max wait %.2fs, wait total %.2fs; want true, 1, 1–2 s, 1, ≥ 0.9 s, ≥ 0.9 s",
			sum.PoolExhausted, sum.PoolExhaustedSpans, sum.PoolExhaustedSeconds, sum.PgBouncerMaxClWaiting, sum.PgBouncerMaxWaitSeconds, sum.PgBouncerWaitSecondsTotal)
	}
	for _, c := range holders[1:] {
		if _, err := c.Exec(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
	}
}

// testLeastPrivilege: the probe's role is no superuser and a member of
// pg_monitor only — and that is enough.
func testLeastPrivilege(t *testing.T, ctx context.Context, env *fixtures.Env, observer *pgx.Conn) {
	role := mustURL(t, env.ProbeDSN).User.Username()
	var super bool
	var member []string
	err := observer.QueryRow(ctx, `SELECT r.rolsuper, coalesce(array_agg(g.rolname) FILTER (WHERE g.rolname IS NOT NULL), '{}')
FROM pg_roles r LEFT JOIN pg_auth_members m ON m.member = r.oid LEFT JOIN pg_roles g ON g.oid = m.roleid
WHERE r.rolname = $1 GROUP BY r.rolsuper`, role).Scan(&super, &member)
	if err != nil {
		t.Fatal(err)
	}
	if super || len(member) != 1 || member[0] != "pg_monitor" {
		t.Fatalf("role %s: superuser %v, member of %v; want pg_monitor only", role, super, member)
	}
	p, err := Start(ctx, Config{DSN: env.ProbeDSN})
	if err != nil {
		t.Fatalf("Start as %s: %v", role, err)
	}
	if _, err := p.Stop(); err != nil {
		t.Fatal(err)
	}
}

// testStates: every state is counted, and the rows come for the
// backends idle in transaction, aborted ones included (PostgreSQL clears
// their xact_start).
func testStates(t *testing.T, ctx context.Context, env *fixtures.Env, observer *pgx.Conn) {
	var sessions []*session
	for range 3 {
		sessions = append(sessions, openIdleSession(t, ctx, env, observer))
	}
	aborted := connect(t, ctx, env.PostgresDSN)
	var abortedPID int32
	if err := aborted.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&abortedPID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"BEGIN", "SELECT 1/0"} {
		_, _ = aborted.Exec(ctx, q)
	}
	busy := connect(t, ctx, env.PostgresDSN)
	done := make(chan error, 1)
	go func() { _, err := busy.Exec(ctx, "SELECT pg_sleep(1)"); done <- err }()
	defer func() {
		if err := <-done; err != nil {
			t.Errorf("pg_sleep: %v", err)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	pg, err := newPGSampler(env.ProbeDSN, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.close()
	if _, err := pg.setup(ctx, ""); err != nil {
		t.Fatal(err)
	}
	a, err := pg.read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Besides: the observer (idle) and PgBouncer's idle server connections.
	if s := a.states; s.IdleInTx != 3 || s.IdleInTxAborted != 1 || s.Active != 1 || s.Idle < 1 || s.Other != 0 {
		t.Errorf("states %+v; want 3 idle in transaction, 1 aborted, 1 active, some idle", s)
	}
	want := []int32{abortedPID, sessions[0].pid, sessions[1].pid, sessions[2].pid}
	var got []int32
	for _, r := range a.rows {
		got = append(got, r.PID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || a.oldestXact.IsZero() {
		t.Errorf("rows for %v, oldest transaction %s; want rows for %v and an oldest transaction", got, a.oldestXact, want)
	}
	for _, s := range sessions {
		if _, err := s.conn.Exec(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := aborted.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// metricValue is the value of the sample line that starts with series in a
// Prometheus text exposition, -1 when there is none.
func metricValue(text, series string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
				return v
			}
		}
	}
	return -1
}
