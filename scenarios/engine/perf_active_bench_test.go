//go:build linux

package engine

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// maxRSS samples the process's resident memory every 100 ms for d and
// returns the largest: the peak a user of the engine sees, garbage not yet
// collected included.
func maxRSS(d time.Duration) int64 {
	var peak int64
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		peak = max(peak, mcptest.RSSBytes("self"))
	}
	return peak
}

// startCPUProfile profiles the steady window alone into
// LEAKBENCH_CPUPROFILE when it is set (go test's -cpuprofile also takes
// the ramp and the handshakes); it returns the function that stops it.
func startCPUProfile(tb testing.TB) func() {
	path := os.Getenv("LEAKBENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// writeHeapProfile writes the live heap to LEAKBENCH_HEAPPROFILE when it
// is set: what the users' memory went to, for go tool pprof.
func writeHeapProfile(tb testing.TB) {
	path := os.Getenv("LEAKBENCH_HEAPPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkEngineActiveToolsCall is the efficiency figure of issue #28:
// LEAKBENCH_ACTIVE_USERS (3,000) users, a connection each, each thinking
// 0.2–1.0 s (uniform) between tools/call requests to a fast server (the
// canned endpoint, in a child process so that its CPU and memory are not
// counted). Over LEAKBENCH_ACTIVE_SECONDS (10) of steady load it reports
// the engine's CPU per request and the resident memory each active user
// costs: the process's RSS with everyone active less its RSS before the
// run began, both at the peak of the steady window and settled (after a
// GC, as a long-running engine settles); and what the
// live heap and the goroutine stacks hold per user. LEAKBENCH_CPUPROFILE
// and LEAKBENCH_HEAPPROFILE write the steady window's profiles.
func BenchmarkEngineActiveToolsCall(b *testing.B) {
	load := newActiveLoad(b)
	users := load.users
	for b.Loop() {
		w := playActiveToolsCall(b, load, true)
		reportCPU(b, users, w.cpuWindow)
		b.ReportMetric(float64(w.rssPeak)/float64(users), "rssB/user")
		b.ReportMetric(float64(w.rssSettled)/float64(users), "settled-rssB/user")
		b.ReportMetric(float64(w.settled.HeapInuse)/float64(users), "live-heapB/user")
		b.ReportMetric(float64(w.settled.StackInuse)/float64(users), "stackB/user")
		b.ReportMetric(w.allocsPerRequest, "allocs/req")
	}
}

// activeWindow is what one steady window of the active-user load
// measured: its requests, wall time and CPU, and the memory it took above
// what the process held before the run.
type activeWindow struct {
	cpuWindow
	rssPeak, rssSettled int64
	settled             runtime.MemStats
	allocsPerRequest    float64 // over the whole run, ramp and handshakes too
}

// playActiveToolsCall plays the active-user load — users, a connection
// each, 0.2–1.0 s uniform think between tools/call requests to load.url —
// through a ramp and past the handshakes, then measures hold of steady
// load, profiled when asked (LEAKBENCH_CPUPROFILE, LEAKBENCH_HEAPPROFILE).
// With sampleRSS it samples the process's memory through the window (its
// peak, then settled after a GC), which costs CPU of its own.
func playActiveToolsCall(b *testing.B, load activeLoad, sampleRSS bool) activeWindow {
	users, hold := load.users, load.hold
	const ramp = 3 * time.Second
	p := rampedPlan(users, ramp, hold, []plan.Step{
		{Kind: plan.StepThink, Think: plan.Think{Distribution: plan.ThinkUniform, Min: plan.Duration(200 * time.Millisecond), Max: plan.Duration(time.Second)}},
		{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "user {{user}} iteration {{iteration}}"}},
	})
	runtime.GC()
	debug.FreeOSMemory()
	rss0 := mcptest.RSSBytes("self")
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	br := startRun(b, p, load.url)
	time.Sleep(ramp + 2*time.Second) // everyone in, past the handshake
	var w activeWindow
	stopProfile := startCPUProfile(b)
	t0, r0 := time.Now(), br.e.totals().requests
	w.c0 = cpuSplit()
	if sampleRSS {
		w.rssPeak = maxRSS(hold) - rss0
	} else {
		time.Sleep(hold)
	}
	w.c1 = cpuSplit()
	t1, tot := time.Now(), br.e.totals()
	stopProfile()
	w.requests, w.wall = tot.requests-r0, t1.Sub(t0)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.allocsPerRequest = float64(ms.Mallocs-m0.Mallocs) / float64(tot.requests)
	if sampleRSS {
		runtime.GC()
		debug.FreeOSMemory()
		w.rssSettled = mcptest.RSSBytes("self") - rss0
		runtime.ReadMemStats(&w.settled)
		writeHeapProfile(b)
	}
	res := br.stop()
	if tot.active != int64(users) || res.Failures != 0 {
		b.Fatalf("%d of %d users active, %d failures: %q", tot.active, users, res.Failures, res.ErrorSamples)
	}
	return w
}

// rampedPlan ramps users up over ramp and holds them well past hold (the
// benchmark stops the run): the active-user benchmarks' load.
func rampedPlan(users int, ramp, hold time.Duration, flow []plan.Step) *plan.Plan {
	return &plan.Plan{Timeout: plan.Duration(10 * time.Second), Seed: 1, Scenarios: []plan.Scenario{{
		Name: "agents", Executor: plan.ExecRampingVUs,
		Stages: []plan.Stage{{Duration: plan.Duration(ramp), Target: users}, {Duration: plan.Duration(hold + time.Hour), Target: users}},
		Flow:   flow,
	}}}
}
