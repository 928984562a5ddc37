package probes

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/leakbench/leakbench/fixtures"
)

// stuckSQL is the statement the test sessions sit idle after: the
// incident's token-scoping lookup.
const stuckSQL = `SELECT 1 FROM email_team_members WHERE user_email = 'x'`

func startStack(tb testing.TB, idleInTxTimeout time.Duration) *fixtures.Env {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test: starts PostgreSQL and PgBouncer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env, err := fixtures.Run(ctx, fixtures.Config{NoGateway: true, IdleInTxTimeout: idleInTxTimeout, Users: 10})
	tb.Cleanup(func() {
		if err := env.Close(); err != nil {
			tb.Errorf("close stack: %v", err)
		}
	})
	if errors.Is(err, fixtures.ErrMissingBinary) {
		tb.Skipf("PostgreSQL or PgBouncer not installed (run `make deps`): %v", err)
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

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s line %d: %v", filepath.Base(path), len(out)+1, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return out
}

// waitGoroutines fails when the goroutine count does not come back to base.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Stop, %d before Start:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPollerOnStack(t *testing.T) {
	const iit = 3 * time.Second
	env := startStack(t, iit)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	observer := connect(t, ctx, env.PostgresDSN)

	t.Run("episodes", func(t *testing.T) {
		const interval = 100 * time.Millisecond
		base := runtime.NumGoroutine()
		runDir := t.TempDir()
		p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN,
			Database: env.Database, Interval: interval, RunDir: runDir})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		defer p.Stop()
		if got := p.IdleInTxTimeout(); got != iit {
			t.Fatalf("IdleInTxTimeout = %s, want %s", got, iit)
		}
		short := openIdleSession(t, ctx, env, observer)
		long := openIdleSession(t, ctx, env, observer)
		leaked := openIdleSession(t, ctx, env, observer)
		shortHeld := commitAfter(t, ctx, observer, short, 300*time.Millisecond)
		longHeld := commitAfter(t, ctx, observer, long, 1500*time.Millisecond)
		// The leaked session is killed by the server's timeout.
		for deadline := leaked.start.Add(iit + 3*time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, state := backendState(t, ctx, observer, leaked.pid); state == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("backend %d still there %s after idle_in_transaction_session_timeout", leaked.pid, 3*time.Second)
			}
		}
		time.Sleep(3 * interval) // let the probe notice
		sum, err := p.Stop()
		if err != nil {
			t.Fatalf("Stop: %v", err)
		}
		waitGoroutines(t, base)

		eps := readJSONL[Episode](t, filepath.Join(runDir, EpisodesFile))
		t.Logf("server spans: %s, %s; episodes: %+v", shortHeld, longHeld, eps)
		if len(eps) != 3 || sum.Episodes != 3 {
			t.Fatalf("want 3 episodes, summary says %d, file has %d: %+v", sum.Episodes, len(eps), eps)
		}
		find := func(s *session) Episode {
			for _, e := range eps {
				if e.PID == s.pid && e.Start.Equal(s.start) {
					return e
				}
			}
			t.Fatalf("no episode for backend %d starting %s: %+v", s.pid, s.start, eps)
			return Episode{}
		}
		for _, c := range []struct {
			name string
			s    *session
			held time.Duration
		}{{"0.3 s", short, shortHeld}, {"1.5 s", long, longHeld}} {
			e := find(c.s)
			if e.EndReason != EndReleased || !e.EndExact {
				t.Errorf("%s: reason %q exact %v, want released, exact", c.name, e.EndReason, e.EndExact)
			}
			if d := math.Abs(e.HoldSeconds - c.held.Seconds()); d > 0.005 {
				t.Errorf("%s: hold %.6fs, server says %.6fs (off by %.1f ms)", c.name, e.HoldSeconds, c.held.Seconds(), d*1000)
			}
			if e.Query != stuckSQL || e.Aborted {
				t.Errorf("%s: query %q aborted %v", c.name, e.Query, e.Aborted)
			}
		}
		e := find(leaked)
		if e.EndReason != EndTimeout || e.EndExact {
			t.Errorf("leaked: reason %q exact %v, want timeout, not exact", e.EndReason, e.EndExact)
		}
		if d := math.Abs(e.HoldSeconds - iit.Seconds()); d > (interval + 500*time.Millisecond).Seconds() {
			t.Errorf("leaked: hold %.3fs, want %s ± %s", e.HoldSeconds, iit, interval+500*time.Millisecond)
		}

		if sum.StuckEpisodes != 2 || sum.TimeoutTerminated != 1 || sum.FailedSamples != 0 {
			t.Errorf("stuck %d, timeout %d, failed samples %d; want 2, 1, 0", sum.StuckEpisodes, sum.TimeoutTerminated, sum.FailedSamples)
		}
		if sum.MaxIdleInTx < 3 || sum.MaxStuckIdleInTx < 2 {
			t.Errorf("max idle in tx %d, max stuck %d; want ≥ 3, ≥ 2", sum.MaxIdleInTx, sum.MaxStuckIdleInTx)
		}
		if len(sum.Culprits) == 0 || sum.Culprits[0].Fingerprint != Fingerprint(stuckSQL) || sum.Culprits[0].Episodes != 2 {
			t.Errorf("culprits %+v, want first %q with 2 episodes", sum.Culprits, Fingerprint(stuckSQL))
		}
		if !sum.PgBouncerSampled {
			t.Error("PgBouncer not sampled")
		}

		samples := readJSONL[Sample](t, filepath.Join(runDir, SamplesFile))
		if len(samples) != sum.Samples || sum.Samples < 30 {
			t.Errorf("%d samples in the file, %d in the summary, want the same and ≥ 30", len(samples), sum.Samples)
		}
		var busy bool // all three sessions in a transaction, each on a server
		for _, s := range samples {
			busy = busy || s.PgBouncer != nil && s.PgBouncer.SvActive >= 3 && s.PgBouncer.ClActive >= 3 && s.States.IdleInTx >= 3
		}
		if !busy {
			t.Error("no sample saw 3 PgBouncer servers active and 3 backends idle in transaction")
		}
	})

	t.Run("reconnects", func(t *testing.T) {
		p, err := Start(ctx, Config{DSN: env.ProbeDSN, Interval: 50 * time.Millisecond})
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		defer p.Stop()
		var killed int
		err = observer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity WHERE application_name = $1`,
			probeApplicationName).Scan(&killed)
		if err != nil || killed != 1 {
			t.Fatalf("terminate the probe's backend: %d terminated, %v", killed, err)
		}
		var failedAt time.Time
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			s := p.Snapshot()
			if s.Error != "" && failedAt.IsZero() {
				failedAt = s.Time
			}
			if s.Error == "" && !failedAt.IsZero() && s.Time.After(failedAt) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no failed sample followed by a good one after terminating the probe; last: %+v", s)
			}
		}
		sum, err := p.Stop()
		if err != nil || sum.FailedSamples < 1 || sum.Samples <= sum.FailedSamples {
			t.Fatalf("after a reconnect: %d samples, %d failed, err %v", sum.Samples, sum.FailedSamples, err)
		}
	})

	t.Run("pgbouncer gone", func(t *testing.T) {
		// One tick at a time, by hand: a PgBouncer that cannot be reached
		// makes each sample carry an error but PostgreSQL is still read.
		pg, err := newPGSampler(env.ProbeDSN, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		timeout, err := pg.setup(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		pools, err := newPoolSampler("postgres://nobody:secret-pw@127.0.0.1:1/pgbouncer?sslmode=disable", env.Database, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		p := &Poller{cfg: Config{Interval: 100 * time.Millisecond, StuckAfter: time.Second}, pg: pg,
			samplers: []sampler{pools}, track: newTracker(timeout), sum: newSummarizer(100*time.Millisecond, time.Second, timeout)}
		defer p.closeSources()
		connect(t, ctx, env.PostgresDSN) // one idle backend to count
		for _, want := range []string{"pgbouncer: connect:", "pgbouncer: not connected (next attempt in"} {
			p.sampleOnce(ctx)
			s := p.Snapshot()
			if !strings.HasPrefix(s.Error, want) || s.PgBouncer != nil || s.States.Idle < 1 || strings.Contains(s.Error, "secret-pw") {
				t.Errorf("sample %+v: want PostgreSQL counts and an error starting %q", s, want)
			}
		}
		if pg.db != env.Database {
			t.Errorf("database from the DSN: %q, want %q", pg.db, env.Database)
		}
	})

	t.Run("bad config", func(t *testing.T) {
		cfg, err := pgx.ParseConfig(env.ProbeDSN)
		if err != nil {
			t.Fatal(err)
		}
		const wrong = "not-the-secret-7"
		bad := strings.Replace(env.ProbeDSN, cfg.Password, wrong, 1)
		if _, err := Start(ctx, Config{DSN: bad}); err == nil || strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), "connect") {
			t.Errorf("wrong password: error %v: want a connect error without the password", err)
		}
		if _, err := Start(ctx, Config{DSN: env.AppDSN}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "directly") {
			t.Errorf("DSN through PgBouncer: error %v, want ErrConfig asking for PostgreSQL directly", err)
		}
		// The application's role, directly: no pg_monitor.
		app, probe := mustURL(t, env.AppDSN), mustURL(t, env.ProbeDSN)
		probe.User = app.User
		if _, err := Start(ctx, Config{DSN: probe.String()}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "pg_monitor") {
			t.Errorf("role without pg_monitor: error %v, want ErrConfig naming pg_monitor", err)
		}
		if _, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: strings.Replace(env.PgBouncerAdminDSN, "@", "x@", 1)}); err == nil || !strings.Contains(err.Error(), "pgbouncer") {
			t.Errorf("bad PgBouncer DSN: error %v, want a pgbouncer connect error", err)
		}
	})
}

func mustURL(t *testing.T, dsn string) *url.URL {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("DSN is not a URL: %v", err)
	}
	return u
}

// BenchmarkSample measures one tick (pg_stat_activity read, episode
// tracking, SHOW POOLS) with 50 client connections open, 25 of them idle
// in transaction.
func BenchmarkSample(b *testing.B) {
	env := startStack(b, -1) // no timeout: the idle transactions must last
	ctx := context.Background()
	for i := range 50 {
		conn := connect(b, ctx, env.PostgresDSN)
		if i%2 == 0 {
			if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
				b.Fatal(err)
			}
			if _, err := conn.Exec(ctx, stuckSQL); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, bc := range []struct{ name, pgbouncer string }{{"postgres", ""}, {"postgres+pgbouncer", env.PgBouncerAdminDSN}} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: bc.pgbouncer, Database: env.Database, Interval: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Stop()
			for p.Snapshot().Time.IsZero() { // the first sample is taken at Start; the next in an hour
				time.Sleep(time.Millisecond)
			}
			b.ReportAllocs()
			for b.Loop() {
				p.sampleOnce(ctx)
			}
			if s := p.Snapshot(); s.Error != "" || s.States.IdleInTx != 25 {
				b.Fatalf("last sample: %+v, want 25 idle in transaction", s)
			}
		})
	}
}
