package probes

import (
	"context"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/testenv"
	"github.com/leakbench/leakbench/probes/poolmetrics"
)

// testTerminated: pg_terminate_backend on the probe's own backend is a
// gap, then sampling resumes on a new connection.
func testTerminated(t *testing.T, ctx context.Context, env *fixtures.Env, observer *pgx.Conn) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	waitFor(t, 2*time.Second, "a first sample", func() bool { return !p.Snapshot().Time.IsZero() })
	var killed int
	err = observer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid))::int FROM pg_stat_activity WHERE application_name = $1`,
		probeApplicationName).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminate the probe's backend: %d terminated, %v", killed, err)
	}
	waitGapThenSample(t, p, 5*time.Second)
	sum, err := p.Stop()
	if err != nil || sum.GapSamples < 1 || sum.Samples <= sum.GapSamples || len(sum.Warnings) != 1 || sum.Warnings[0].Source != "postgres" {
		t.Fatalf("after a reconnect: %d samples, %d gaps, warnings %+v, err %v", sum.Samples, sum.GapSamples, sum.Warnings, err)
	}
}

// waitGapThenSample waits until the Poller has recorded a gap and then a
// good sample after it.
func waitGapThenSample(t *testing.T, p *Poller, d time.Duration) {
	t.Helper()
	var gapAt time.Time
	waitFor(t, d, "a gap, then a good sample", func() bool {
		s := p.Snapshot()
		if s.Gap && gapAt.IsZero() {
			gapAt = s.Time
		}
		return !gapAt.IsZero() && !s.Gap && s.Time.After(gapAt)
	})
}

// faultyProxy forwards TCP to a server, and can delay its answers, drop
// every connection, and refuse new ones: what the probe sees of a slow
// network, a crash, or a server restarting.
type faultyProxy struct {
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	delay  time.Duration
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newFaultyProxy(t *testing.T, target string) *faultyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultyProxy{target: target, addr: ln.Addr().String()}
	p.serve(ln)
	t.Cleanup(p.close)
	return p
}

// close drops everything and waits for the proxy's goroutines.
func (p *faultyProxy) close() { p.down(); p.wg.Wait() }

func (p *faultyProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(s, c); s.Close() })
			p.wg.Go(func() { p.copyDelayed(c, s); c.Close() })
		}
	})
}

// copyDelayed forwards the server's answers, each after the delay in force.
func (p *faultyProxy) copyDelayed(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			d := p.delay
			p.mu.Unlock()
			time.Sleep(d)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *faultyProxy) setDelay(d time.Duration) { p.mu.Lock(); p.delay = d; p.mu.Unlock() }

// down closes the listener and every connection: connections are reset,
// new ones refused.
func (p *faultyProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func viaProxy(t *testing.T, dsn, addr string) string {
	u := mustURL(t, dsn)
	u.Host = addr
	return u.String()
}

// testSlowReads: answers slower than the interval make samples skip ticks;
// answers slower than the sample timeout make gaps; sampling resumes when
// the network is fast again. A stalled PostgreSQL does not stall PgBouncer
// sampling.
func testSlowReads(t *testing.T, ctx context.Context, env *fixtures.Env) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	proxy := newFaultyProxy(t, mustURL(t, env.ProbeDSN).Host)
	defer proxy.close()
	p, err := Start(ctx, Config{DSN: viaProxy(t, env.ProbeDSN, proxy.addr), PgBouncerAdminDSN: env.PgBouncerAdminDSN})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	proxy.setDelay(250 * time.Millisecond)
	waitFor(t, 3*time.Second, "a slow sample", func() bool { return p.Snapshot().SkippedTicks > 0 })
	proxy.setDelay(sampleTimeout + time.Second)
	waitFor(t, 3*sampleTimeout, "a gap", func() bool { s := p.Snapshot(); return s.Gap && s.PgBouncer != nil })
	proxy.setDelay(0)
	waitFor(t, 3*sampleTimeout, "sampling resumed", func() bool { s := p.Snapshot(); return !s.Gap && s.SkippedTicks == 0 })
	sum, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if sum.SlowSamples == 0 || sum.SkippedTicks == 0 || sum.GapSamples == 0 || sum.MaxSampleSeconds < sampleTimeout.Seconds() {
		t.Errorf("slow samples %d, skipped ticks %d, gaps %d, slowest %.2fs; want some of each, the slowest ≥ %s",
			sum.SlowSamples, sum.SkippedTicks, sum.GapSamples, sum.MaxSampleSeconds, sampleTimeout)
	}
	for _, w := range sum.Warnings {
		if w.Source != "postgres" {
			t.Errorf("warning %+v: PgBouncer, which stayed fast, failed too", w)
		}
	}
}

// ownPgBouncer is a PgBouncer of this test's own in front of the stack's
// PostgreSQL, so that the test can restart it.
type ownPgBouncer struct {
	t    *testing.T
	args []string
	cred *syscall.Credential
	cmd  *exec.Cmd
	dsn  string
}

func startOwnPgBouncer(t *testing.T, env *fixtures.Env) *ownPgBouncer {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
			}
		}
	}
	if err != nil {
		testenv.Missing(t, "pgbouncer not installed")
	}
	// Not t.TempDir: its parent is private to us, and PgBouncer runs as
	// another user when we are root.
	dir, err := os.MkdirTemp("", "leakbench-probe-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pg := mustURL(t, env.ProbeDSN)
	ini := "[databases]\nmcp = host=127.0.0.1 port=" + pg.Port() + " dbname=mcp\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = " +
		strconv.Itoa(port) + "\nunix_socket_dir =\nauth_type = trust\nauth_file = " + filepath.Join(dir, "users.txt") +
		"\nadmin_users = watcher\npool_mode = transaction\nlog_connections = 0\nlog_disconnections = 0\n"
	b := &ownPgBouncer{t: t, args: []string{bin, filepath.Join(dir, "pgbouncer.ini")},
		dsn: "postgres://watcher@127.0.0.1:" + strconv.Itoa(port) + "/pgbouncer?sslmode=disable"}
	files := map[string]string{"pgbouncer.ini": ini, "users.txt": `"watcher" ""` + "\n"}
	if os.Geteuid() == 0 { // PgBouncer refuses to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			testenv.Missing(t, "running as root without a postgres user to run PgBouncer as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		b.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if b.cred != nil {
			if err := os.Chown(path, int(b.cred.Uid), int(b.cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.start()
	t.Cleanup(b.stop)
	return b
}

func (b *ownPgBouncer) start() {
	b.cmd = exec.Command(b.args[0], b.args[1:]...)
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: b.cred}
	var out strings.Builder
	b.cmd.Stdout, b.cmd.Stderr = &out, &out
	if err := b.cmd.Start(); err != nil {
		b.t.Fatalf("start pgbouncer: %v", err)
	}
	cfg, _ := pgx.ParseConfig(b.dsn)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := pgx.ConnectConfig(context.Background(), cfg)
		if err == nil {
			c.Close(context.Background())
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("own pgbouncer does not answer: %v\n%s", err, out.String())
		}
	}
}

// stop shuts PgBouncer down (SIGINT, by pid) and waits for it.
func (b *ownPgBouncer) stop() {
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	_ = b.cmd.Wait()
	b.cmd = nil
}

// testRestarts: PgBouncer restarting and the scrape target going away and
// coming back are warnings, then recoveries; PostgreSQL sampling goes on
// without a gap throughout.
func testRestarts(t *testing.T, ctx context.Context, env *fixtures.Env) {
	bouncer := startOwnPgBouncer(t, env)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := ln.Addr().String()
	// The service's pool, under the reference gateway's names.
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcp_gateway_db_pool_max_connections", Help: "max"}))
	pool := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	target := httptest.NewUnstartedServer(pool)
	target.Listener.Close()
	target.Listener = ln
	target.Start()
	defer func() { target.Close() }()

	var mu sync.Mutex
	var warned []rundir.Warning
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: bouncer.dsn, Scrape: []poolmetrics.Target{{URL: target.URL + "/metrics"}},
		ScrapeInterval: 200 * time.Millisecond,
		OnWarning:      func(w rundir.Warning) { mu.Lock(); warned = append(warned, w); mu.Unlock() }})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	lastWarning := func() rundir.Warning {
		mu.Lock()
		defer mu.Unlock()
		if len(warned) == 0 {
			return rundir.Warning{}
		}
		return warned[len(warned)-1]
	}
	waitFor(t, 2*time.Second, "PgBouncer sampled", func() bool { return p.Snapshot().PgBouncer != nil })

	bouncer.stop()
	waitFor(t, 3*time.Second, "a PgBouncer warning", func() bool { return lastWarning().Source == "pgbouncer" && !lastWarning().Recovered })
	bouncer.start()
	waitFor(t, 10*time.Second, "PgBouncer back", func() bool { return lastWarning().Source == "pgbouncer" && lastWarning().Recovered })

	target.Close()
	source := "scrape " + target.URL + "/metrics"
	waitFor(t, 3*time.Second, "a scrape warning", func() bool { return lastWarning().Source == source && !lastWarning().Recovered })
	ln, err = net.Listen("tcp", metricsAddr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", metricsAddr, err)
	}
	target = httptest.NewUnstartedServer(pool)
	target.Listener.Close()
	target.Listener = ln
	target.Start()
	waitFor(t, 3*time.Second, "scrape target back", func() bool { return lastWarning().Source == source && lastWarning().Recovered })
	waitFor(t, 2*time.Second, "PgBouncer sampled", func() bool { return p.Snapshot().PgBouncer != nil })

	sum, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if sum.GapSamples != 0 || sum.FailedSamples == 0 || !sum.AppPoolSampled || !sum.PgBouncerSampled || len(sum.Warnings) < 2 {
		t.Errorf("%d samples, %d gaps, %d failed, app pool %v, PgBouncer %v, warnings %+v; want no gaps, some failed, both sampled, ≥ 2 warnings",
			sum.Samples, sum.GapSamples, sum.FailedSamples, sum.AppPoolSampled, sum.PgBouncerSampled, sum.Warnings)
	}
}

// testPostgresRestart makes PostgreSQL crash and restart for real: a
// backend killed with SIGKILL makes the postmaster end every session and
// reinitialize. The probe records gaps and resumes.
func testPostgresRestart(t *testing.T, ctx context.Context, env *fixtures.Env) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, err := Start(ctx, Config{DSN: env.ProbeDSN, PgBouncerAdminDSN: env.PgBouncerAdminDSN})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	waitFor(t, 2*time.Second, "a first sample", func() bool { return !p.Snapshot().Time.IsZero() })
	victim := connect(t, ctx, env.PostgresDSN)
	var pid int
	if err := victim.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil { // a backend of our own, by pid
		t.Skipf("cannot signal PostgreSQL's backend %d (not running as its user or root?): %v", pid, err)
	}
	waitGapThenSample(t, p, 30*time.Second)
	sum, err := p.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if sum.GapSamples == 0 || sum.Samples == sum.GapSamples || !sum.PgBouncerSampled {
		t.Errorf("%d samples, %d gaps; want gaps and good samples after them", sum.Samples, sum.GapSamples)
	}
	t.Logf("restart: %d gaps of %d samples; warnings %+v", sum.GapSamples, sum.Samples, sum.Warnings)
}
