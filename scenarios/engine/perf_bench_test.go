//go:build linux

package engine

// Performance figures of the engine, each a testing.B benchmark reporting
// its own metrics (make bench; or go test -run '^$' -bench Engine ./scenarios/).
// The target runs in a child process (helper_test.go), so that what is
// measured here is the engine alone. Sizes can be lowered for a quick look:
// LEAKBENCH_IDLE_SESSIONS, LEAKBENCH_ACTIVE_USERS, LEAKBENCH_ACTIVE_SECONDS.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchRun is an engine playing a plan in the background.
type benchRun struct {
	e      *engine
	cancel context.CancelFunc
	done   chan *rundir.LoadResult
}

func startRun(tb testing.TB, p *plan.Plan, target string) *benchRun {
	tb.Helper()
	p.Target = target
	cp, err := plan.Compile(p)
	if err != nil {
		tb.Fatal(err)
	}
	e := newEngine(cp, nil, RunOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	br := &benchRun{e: e, cancel: cancel, done: make(chan *rundir.LoadResult, 1)}
	go func() {
		res := e.run(ctx, RunOptions{}, &outputs{})
		e.client.CloseIdleConnections()
		br.done <- res
	}()
	return br
}

// stop ends the run and returns its result: the benchmarks' plans have no
// gracefulStop, so requests in flight are abandoned at once; the users
// then close their sessions.
func (br *benchRun) stop() *rundir.LoadResult {
	br.cancel()
	return <-br.done
}

// sockets counts the sockets process pid holds open: the server's side of
// the connections (plus its listener).
func sockets(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// BenchmarkEngineIdleSessions holds LEAKBENCH_IDLE_SESSIONS (10,000)
// initialized MCP sessions against the go-sdk server (JSON answers, in a
// child process), each user with its own keep-alive connection (the
// default), and reports what each costs the engine — heap, goroutine
// stacks and resident memory per session, connection included — and how
// many connections the server holds. Users ramp up at 1,000/s, as a real
// test would.
func BenchmarkEngineIdleSessions(b *testing.B) {
	n := envInt("LEAKBENCH_IDLE_SESSIONS", 10_000)
	mcptest.RaiseOpenFiles(b)
	h := mcptest.StartHelper(b, mcptest.HelperSDK)
	ramp := time.Duration(n/1000+1) * time.Second
	for b.Loop() {
		p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Scenarios: []plan.Scenario{{
			Name: "idle", Executor: plan.ExecRampingVUs,
			Stages: []plan.Stage{{Duration: plan.Duration(ramp), Target: n}, {Duration: plan.Duration(time.Hour), Target: n}},
			Flow:   []plan.Step{{Kind: plan.StepThink, Think: plan.Think{Distribution: plan.ThinkFixed, Duration: plan.Duration(time.Hour)}}},
		}}}
		runtime.GC()
		debug.FreeOSMemory()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		rss0, srv0, g0 := mcptest.RSSBytes("self"), mcptest.RSSBytes(strconv.Itoa(h.Cmd.Process.Pid)), runtime.NumGoroutine()
		br := startRun(b, p, h.URL)
		deadline := time.Now().Add(ramp + 2*time.Minute)
		for br.e.m.scen[0].requests.Load() < int64(n) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(time.Second) // let the last handshakes settle
		runtime.GC()
		debug.FreeOSMemory()
		runtime.ReadMemStats(&m1)
		rss1, srv1, g1 := mcptest.RSSBytes("self"), mcptest.RSSBytes(strconv.Itoa(h.Cmd.Process.Pid)), runtime.NumGoroutine()
		serverConns := sockets(h.Cmd.Process.Pid) - 1 // less the listener
		sc := br.e.m.scen[0]
		live, failed := sc.active.Load(), sc.failures.Load()
		res := br.stop()
		if live != int64(n) || failed != 0 {
			b.Fatalf("%d of %d sessions live, %d failed: %q", live, n, failed, res.ErrorSamples)
		}
		per := func(d int64) float64 { return float64(d) / float64(n) }
		b.ReportMetric(float64(n), "sessions")
		b.ReportMetric(per(int64(m1.HeapInuse)-int64(m0.HeapInuse)), "heapB/session")
		b.ReportMetric(per(int64(m1.StackInuse)-int64(m0.StackInuse)), "stackB/session")
		b.ReportMetric(per(rss1-rss0), "rssB/session")
		b.ReportMetric(per(int64(g1-g0)), "goroutines/session")
		b.ReportMetric(per(srv1-srv0), "server-rssB/session")
		b.ReportMetric(float64(serverConns), "server-conns")
	}
}

// contextForgeMix is the ContextForge load test's MCPJsonRpcUser: think
// 0.2–1.0 s, then one request picked by weight.
func contextForgeMix() []plan.Step {
	one := func(w int, s plan.Step) plan.Choice { return plan.Choice{Weight: w, Steps: []plan.Step{s}} }
	return []plan.Step{
		{Kind: plan.StepThink, Think: plan.Think{Distribution: plan.ThinkUniform, Min: plan.Duration(200 * time.Millisecond), Max: plan.Duration(time.Second)}},
		{Kind: plan.StepChoose, Choices: []plan.Choice{
			one(10, plan.Step{Kind: plan.OpListTools}),
			one(8, plan.Step{Kind: plan.OpListResources}),
			one(8, plan.Step{Kind: plan.OpListPrompts}),
			one(5, plan.Step{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "user {{user}} iteration {{iteration}}"}}),
			one(4, plan.Step{Kind: plan.OpReadResource, URI: "file:///a.txt"}),
			one(4, plan.Step{Kind: plan.OpGetPrompt, Name: "p", Arguments: map[string]any{"who": "{{user}}"}}),
			one(3, plan.Step{Kind: plan.OpInitialize}),
			one(2, plan.Step{Kind: plan.OpPing}),
		}},
	}
}

// BenchmarkEngineActiveUsersCPU plays the ContextForge user mix with
// LEAKBENCH_ACTIVE_USERS (3,000) users against a trivial MCP endpoint (a
// child process) and reports the engine's CPU use while all are active
// (cores = CPU seconds per wall second), over LEAKBENCH_ACTIVE_SECONDS (10).
func BenchmarkEngineActiveUsersCPU(b *testing.B) {
	users := envInt("LEAKBENCH_ACTIVE_USERS", 3000)
	hold := time.Duration(envInt("LEAKBENCH_ACTIVE_SECONDS", 10)) * time.Second
	mcptest.RaiseOpenFiles(b)
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	const ramp = 3 * time.Second
	for b.Loop() {
		p := rampedPlan(users, ramp, hold, contextForgeMix())
		br := startRun(b, p, h.URL)
		time.Sleep(ramp + time.Second) // everyone in and thinking
		t0, c0, s0, r0 := time.Now(), procstat.Self(), procstat.Of(h.Cmd.Process.Pid), br.e.totals().requests
		time.Sleep(hold)
		t1, c1, s1, tot := time.Now(), procstat.Self(), procstat.Of(h.Cmd.Process.Pid), br.e.totals()
		serverConns := sockets(h.Cmd.Process.Pid) - 1 // less the listener
		res := br.stop()
		if tot.active != int64(users) || res.Failures != 0 {
			b.Fatalf("%d of %d users active, %d failures: %q", tot.active, users, res.Failures, res.ErrorSamples)
		}
		wall := t1.Sub(t0).Seconds()
		reqs := float64(tot.requests - r0)
		b.ReportMetric(float64(users), "users")
		b.ReportMetric((c1-c0).Seconds()/wall, "cores")
		b.ReportMetric(reqs/wall, "req/s")
		b.ReportMetric(float64((c1-c0).Microseconds())/reqs, "cpu-µs/req")
		b.ReportMetric((s1-s0).Seconds()/wall, "server-cores")
		b.ReportMetric(float64(serverConns), "server-conns")
	}
}

// wrkScript makes wrk send the request the engine sends, header for
// header and byte for byte in size: the engine's User-Agent and the trace
// context every engine request carries (the Traceparent header and its
// copy in params._meta, with which leakbench joins stuck sessions to
// requests), so that the server does the same work for both and the
// comparison measures the load generators, not the requests.
const wrkScript = `wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"name":"echo","arguments":{"text":"hello"}}}'
wrk.headers["User-Agent"] = "leakbench/0.1.0"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = "s-1"
wrk.headers["Mcp-Protocol-Version"] = "2025-06-18"
wrk.headers["Traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
`

// runWrk runs wrk with the tools/call request above and returns its
// requests per second and its p50 latency.
func runWrk(tb testing.TB, url string, conns int, d time.Duration) (float64, time.Duration) {
	tb.Helper()
	script := filepath.Join(tb.TempDir(), "toolscall.lua")
	if err := os.WriteFile(script, []byte(wrkScript), 0o644); err != nil {
		tb.Fatal(err)
	}
	threads := min(conns, 2)
	out, err := exec.Command("wrk", "-t"+strconv.Itoa(threads), "-c"+strconv.Itoa(conns),
		"-d"+strconv.Itoa(int(d.Seconds()))+"s", "--latency", "-s", script, url).CombinedOutput()
	if err != nil {
		tb.Fatalf("wrk: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Requests/sec:\s+([\d.]+)`).FindSubmatch(out)
	l := regexp.MustCompile(`\s50%\s+([\d.]+)(us|ms|s)`).FindSubmatch(out)
	if m == nil || l == nil || strings.Contains(string(out), "Non-2xx") {
		tb.Fatalf("unexpected wrk output:\n%s", out)
	}
	rate, _ := strconv.ParseFloat(string(m[1]), 64)
	p50, _ := time.ParseDuration(string(l[1]) + strings.Replace(string(l[2]), "us", "µs", 1))
	return rate, p50
}

// engineToolsCall plays conns users sending tools/call back to back for d
// and returns the result.
func engineToolsCall(tb testing.TB, url string, conns int, d time.Duration) *rundir.LoadResult {
	tb.Helper()
	p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Scenarios: []plan.Scenario{{
		Name: "calls", Executor: plan.ExecConstantVUs, VUs: conns, Duration: plan.Duration(d), GracefulStop: plan.Duration(time.Second),
		Flow: []plan.Step{{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "hello"}}},
	}}}
	res, err := RunPlan(context.Background(), p, RunOptions{Target: url})
	if err != nil {
		tb.Fatal(err)
	}
	if res.Failures != 0 {
		tb.Fatalf("%d failures: %q", res.Failures, res.ErrorSamples)
	}
	return res
}

// BenchmarkEngineVsWrk measures the engine's peak tools/call rate against
// a trivial MCP endpoint and wrk's rate for the same HTTP request on the
// same endpoint, side by side (two rounds, alternating, 50 connections,
// 3 s each), and reports both and their ratio. The engine's 50 users each
// hold a connection of their own (the default), as wrk's 50 connections.
func BenchmarkEngineVsWrk(b *testing.B) {
	if _, err := exec.LookPath("wrk"); err != nil {
		b.Skip("wrk is not installed (apt-get install -y wrk)")
	}
	const conns, d = 50, 3 * time.Second
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	for b.Loop() {
		var engine, wrk float64
		for round := range 2 {
			run := []func(){
				func() {
					res := engineToolsCall(b, h.URL, conns, d)
					engine += float64(res.Latency[plan.OpCallTool].Count) / d.Seconds() / 2
				},
				func() {
					r, _ := runWrk(b, h.URL, conns, d)
					wrk += r / 2
				},
			}
			run[round%2]()
			run[1-round%2]()
		}
		b.ReportMetric(engine, "engine-req/s")
		b.ReportMetric(wrk, "wrk-req/s")
		b.ReportMetric(engine/wrk, "engine/wrk")
	}
}

// BenchmarkEngineAccuracy: against an endpoint that answers tools/call
// after a fixed 20 ms, the engine's p50 and how far it is from 20 ms. On a
// busy machine the endpoint's own sleep overshoots, so the endpoint also
// reports the p50 of the time it really took (from having read the request
// to writing the answer); the difference is what the engine's measurement
// adds. wrk's p50 for the same request is given for reference.
func BenchmarkEngineAccuracy(b *testing.B) {
	const conns, d = 10, 3 * time.Second
	h := mcptest.StartHelper(b, mcptest.HelperDelay)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for b.Loop() {
		h.HandledP50(b) // reset
		res := engineToolsCall(b, h.URL, conns, d)
		server := ms(h.HandledP50(b))
		l := res.Latency[plan.OpCallTool]
		b.ReportMetric(l.P50Ms, "p50-ms")
		b.ReportMetric(l.P50Ms-ms(mcptest.HelperDelayTime), "p50-error-ms")
		b.ReportMetric(server, "server-p50-ms")
		b.ReportMetric(l.P50Ms-server, "p50-minus-server-ms")
		b.ReportMetric(l.P99Ms, "p99-ms")
		if _, err := exec.LookPath("wrk"); err == nil {
			_, p50 := runWrk(b, h.URL, conns, d)
			server := ms(h.HandledP50(b))
			b.ReportMetric(ms(p50)-server, "wrk-p50-minus-server-ms")
		}
	}
}
