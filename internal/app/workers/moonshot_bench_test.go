//go:build linux

package workers_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/app/workers"
	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// The moonshot's sizes (issue #43 point 3), each overridable to try it
// small: LEAKBENCH_BENCH_USERS users with a connection each held for
// LEAKBENCH_BENCH_SECONDS, LEAKBENCH_BENCH_LISTEN_USERS with a listen
// stream each held for LEAKBENCH_BENCH_LISTEN_SECONDS.
const (
	usersEnv         = "LEAKBENCH_BENCH_USERS"
	secondsEnv       = "LEAKBENCH_BENCH_SECONDS"
	listenUsersEnv   = "LEAKBENCH_BENCH_LISTEN_USERS"
	listenSecondsEnv = "LEAKBENCH_BENCH_LISTEN_SECONDS"
	// dirEnv keeps the run directory (Play's, with each worker's) there
	// instead of a temporary one.
	dirEnv = "LEAKBENCH_BENCH_DIR"
)

const (
	// minServers: the issue asks for six server processes at least (the
	// server is bound by the open-file limit as leakbench is); more when
	// the connections need them, with 15% kept for SO_REUSEPORT's hash,
	// which spreads connections over the listeners unevenly.
	minServers = 6
	// maxProcs: past this many workers or servers (a machine whose
	// open-file limit is a few thousand) the load is no longer the
	// issue's on a two-core machine: skipped, with the numbers.
	maxProcs = 24
	// maxRampRate is the most users a second the ramp starts: each
	// opens a connection and sends server/discover, about 0.3 ms of CPU
	// between client and server, so that the ramp leaves the two cores
	// room for the users already in (their schedule must stay on time).
	maxRampRate = 2000
	// settle is the slack past the ramp before the measured window
	// (the last users' discover answered) and past the window before the
	// plan ends.
	settle = 3 * time.Second
	// lateLimitMs is the generator self-check's limit on its lateness p99
	// (rundir.GeneratorLagLimitMs).
	lateLimitMs = 50
)

// BenchmarkMoonshot is issue #43's point 3: agents that mostly wait, as
// many as this machine holds, played by leakbench's worker processes
// (workers.Play, as leakbench run --workers auto plays them: GOMAXPROCS=1
// each, execution segments, results merged exactly, the connections
// spread over 127.0.0.x source addresses) against the canned MCP server
// (mcptest.CannedMCP) run as several processes sharing one port with
// SO_REUSEPORT. Every user speaks 2026-07-28 (server/discover, then
// stateless calls), holds its own keep-alive connection and calls
// tools/call every 20–40 s (uniform think first).
//
//   - agents: LEAKBENCH_BENCH_USERS (100,000) users, steady for
//     LEAKBENCH_BENCH_SECONDS (120) after the ramp;
//   - listen: LEAKBENCH_BENCH_LISTEN_USERS (10,000) users each with a
//     subscriptions/listen stream too (two connections a user), steady for
//     LEAKBENCH_BENCH_LISTEN_SECONDS (30).
//
// It fails when a request failed, when a user did not connect, or when
// a worker's schedule was late by p99 more than 50 ms (its generator
// self-check; the worst worker's, so stricter than the merged figure).
// It reports:
//
//   - rssB/user: the workers' resident memory summed (VmRSS of every
//     worker process, sampled each second of the steady window, its
//     peak) over the users — all of it: each worker's runtime, binary,
//     buffers and uncollected garbage, not the users' share alone (the
//     issue's goal: at most 14 KB);
//   - cpu-µs/req: the workers' CPU (user + system, /proc/PID/stat) over
//     the steady window, per tools/call answered in it; server-cpu-µs/req
//     the servers' likewise;
//   - ramp-up-s: from the first user's server/discover answered to the
//     last's (polled from the workers' merged /metrics every 500 ms,
//     which they update every second; with listen, until the servers
//     also hold every user's stream open);
//   - requests: every request of the run (the merged result's), and
//     req/s in the steady window.
//
// The ramp runs at most maxRampRate users a second and at most half of
// the servers' accept queues a second (their listen backlog is
// net.core.somaxconn each), so that a server process stalled for a
// second does not overflow its queue: connections beyond it would be
// refused or their SYNs dropped (a SYN flood of loopback), not served.
func BenchmarkMoonshot(b *testing.B) {
	b.Run("agents", func(b *testing.B) {
		playMoonshot(b, moonshot{users: envInt(usersEnv, 100_000), hold: envSeconds(secondsEnv, 120)})
	})
	b.Run("listen", func(b *testing.B) {
		playMoonshot(b, moonshot{users: envInt(listenUsersEnv, 10_000), hold: envSeconds(listenSecondsEnv, 30), listen: true})
	})
}

// moonshot is one case's load.
type moonshot struct {
	users  int
	hold   time.Duration
	listen bool
}

func (m moonshot) conns() int {
	if m.listen {
		return 2 * m.users
	}
	return m.users
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envSeconds(name string, def int) time.Duration {
	return time.Duration(envInt(name, def)) * time.Second
}

// somaxconn is the kernel's cap on a listen backlog, which Go's listeners
// ask for in full.
func somaxconn() int {
	raw, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if n, err2 := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && err2 == nil && n > 0 {
		return n
	}
	return 4096 // Linux's default since 5.4
}

// rampDown is how long the users take to leave: three times as fast as
// they came (closing costs less than opening and handshaking).
func rampDown(ramp time.Duration) time.Duration { return max(time.Second, ramp/3) }

// plan is the users' plan: ramp up, hold, ramp down; it ends by itself.
func (m moonshot) plan(ramp time.Duration) *plan.Plan {
	return &plan.Plan{Timeout: plan.Duration(10 * time.Second), Seed: 1, ProtocolVersion: "2026-07-28",
		Scenarios: []plan.Scenario{{
			Name: "agents", Executor: plan.ExecRampingVUs, Listen: m.listen,
			GracefulStop: plan.Duration(5 * time.Second), GracefulRampDown: plan.Duration(5 * time.Second),
			// Down as gradually as up: 100,000 users stopped at once
			// close their connections in one burst, which made the last
			// seconds' due times late by hundreds of milliseconds.
			Stages: []plan.Stage{{Duration: plan.Duration(ramp), Target: m.users},
				{Duration: plan.Duration(m.hold + 3*settle), Target: m.users},
				{Duration: plan.Duration(rampDown(ramp)), Target: 0}},
			Flow: []plan.Step{
				{Kind: plan.StepThink, Think: plan.Think{Distribution: plan.ThinkUniform, Min: plan.Duration(20 * time.Second), Max: plan.Duration(40 * time.Second)}},
				{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "agent {{user}} call {{iteration}}"}},
			},
		}}}
}

func playMoonshot(b *testing.B, m moonshot) {
	mcptest.RaiseOpenFiles(b)
	limits, err := workers.ReadLimits()
	if err != nil {
		b.Fatal(err)
	}
	perProc := int(limits.OpenFiles) - 100 // the server's own files
	servers := max(minServers, (m.conns()*115/100+perProc-1)/max(perProc, 1))
	rate := max(1, min(maxRampRate, servers*somaxconn()/2/(m.conns()/m.users)))
	ramp := max(2*time.Second, time.Duration(m.users/rate)*time.Second)
	p := m.plan(ramp)
	// The layout is the real one (run --workers auto): the worker count
	// from the open-file limit, the loopback source addresses, the
	// budget check. Its target's port is set once the servers listen.
	lay, err := workers.NewLayout(p, workers.Config{Auto: true}, "http://127.0.0.1:1/mcp", limits)
	if err != nil {
		b.Fatal(err)
	}
	if servers > maxProcs || lay.Count > maxProcs || perProc <= 0 {
		b.Skipf("RLIMIT_NOFILE is %d here: %d users (%d connections) need %d worker and %d server processes, more than %d on this machine",
			limits.OpenFiles, m.users, m.conns(), lay.Count, servers, maxProcs)
	}
	srv := mcptest.StartHelpers(b, mcptest.HelperCanned, servers)
	target := srv[0].URL
	if lay, err = workers.NewLayout(p, workers.Config{Auto: true}, target, limits); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r := runMoonshot(b, m, p, lay, srv, ramp)
		r.report(b, m, lay, servers)
	}
}

// moonshotRun is what one run measured.
type moonshotRun struct {
	rampUp, window        time.Duration
	peakRSS               int64
	cpu, serverCPU        time.Duration
	calls, requests       int64
	lateP99Ms             float64
	sourceAddrs, protocol int
}

// runMoonshot plays the plan as the layout's workers and measures its
// steady window; it fails the benchmark when a check does not hold.
func runMoonshot(b *testing.B, m moonshot, p *plan.Plan, lay *workers.Layout, srv []*mcptest.Helper, ramp time.Duration) moonshotRun {
	target := srv[0].URL
	raw, err := json.Marshal(p)
	if err != nil {
		b.Fatal(err)
	}
	metricsAddr := freeAddr(b)
	length := ramp + m.hold + 3*settle + rampDown(ramp)
	ctx, cancel := context.WithTimeout(context.Background(), length+3*time.Minute)
	defer cancel()
	dir := b.TempDir()
	if keep := os.Getenv(dirEnv); keep != "" {
		dir = keep // kept for a look at the workers' seconds (load.jsonl)
	}
	c := &commands{}
	log := newWatchLog()
	done := make(chan *playOut, 1)
	go func() {
		res, rec, err := workers.Play(ctx, workers.Options{Command: c.command, Layout: lay, PlanJSON: raw, Target: target,
			Dir: dir, MaxDuration: length + 10*time.Second, Log: log, MetricsAddr: metricsAddr})
		done <- &playOut{res, rec, err}
	}()
	var out *playOut
	// However this ends (a b.Fatal too), Play has stopped every worker
	// before the benchmark goes on.
	defer func() {
		cancel()
		if out == nil {
			<-done
		}
	}()
	var r moonshotRun
	select {
	case <-log.started:
		r, out = measure(ctx, b, m, c.pids(), srv, metricsAddr, ramp, done)
	case out = <-done:
	}
	if out == nil {
		out = <-done
	}
	c.checkNoneLeft(b)
	defer func() {
		if b.Failed() {
			b.Logf("measured before the checks: %+v", r) // the figures of a run that failed
		}
	}()
	out.check(b, m, log, dir)
	r.requests, r.sourceAddrs = out.res.Requests, len(out.rec.SourceAddrs)
	r.protocol = int(out.res.Protocol["2026-07-28"])
	for _, w := range out.rec.Workers {
		if w.Generator != nil {
			r.lateP99Ms = max(r.lateP99Ms, w.Generator.Lateness.P99Ms)
		}
	}
	if r.lateP99Ms > lateLimitMs {
		b.Errorf("a worker's schedule was late by p99 %.1f ms, over %d ms (its generator self-check)", r.lateP99Ms, lateLimitMs)
	}
	if r.protocol != m.users {
		b.Errorf("%d users spoke 2026-07-28, want all %d (protocol counts: %v)", r.protocol, m.users, out.res.Protocol)
	}
	return r
}

func (r moonshotRun) report(b *testing.B, m moonshot, lay *workers.Layout, servers int) {
	b.ReportMetric(float64(m.users), "users")
	b.ReportMetric(float64(lay.Count), "workers")
	b.ReportMetric(float64(servers), "servers")
	b.ReportMetric(float64(r.sourceAddrs), "source-addrs")
	b.ReportMetric(float64(r.peakRSS)/float64(m.users), "rssB/user")
	b.ReportMetric(float64(r.cpu.Nanoseconds())/1e3/float64(r.calls), "cpu-µs/req")
	b.ReportMetric(float64(r.serverCPU.Nanoseconds())/1e3/float64(r.calls), "server-cpu-µs/req")
	b.ReportMetric(r.rampUp.Seconds(), "ramp-up-s")
	b.ReportMetric(float64(r.calls)/r.window.Seconds(), "req/s")
	b.ReportMetric(float64(r.requests), "requests")
	b.ReportMetric(r.lateP99Ms, "late-p99-ms")
	b.ReportMetric(r.window.Seconds(), "window-s")
}

// sumCPU is the CPU the processes used so far.
func sumCPU(pids []int) time.Duration {
	var d time.Duration
	for _, pid := range pids {
		d += procstat.Of(pid)
	}
	return d
}

// sumRSS is the processes' resident memory together.
func sumRSS(pids []int) int64 {
	var n int64
	for _, pid := range pids {
		n += mcptest.RSSBytes(strconv.Itoa(pid))
	}
	return n
}
