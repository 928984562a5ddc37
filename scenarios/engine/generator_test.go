package engine

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/engine/results"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/plan/threshold"
)

// TestLatenessRecorder: users on every shard record lateness at once;
// one interval gets all of it, with its percentiles, and the next starts
// empty.
func TestLatenessRecorder(t *testing.T) {
	m := newMetrics(1, nil)
	const users, each = 64, 100
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() {
			sh := m.shard(u)
			for i := range each {
				// 1 ms, except one in a hundred at 900 ms.
				d := time.Millisecond
				if i == 0 {
					d = 900 * time.Millisecond
				}
				m.recordLate(sh, d)
			}
		})
	}
	m.recordLate(m.shard(0), -time.Second) // a timer that fired early counts as on time
	wg.Wait()
	all, http, late := hdrlog.New(), hdrlog.New(), hdrlog.New()
	m.interval(all, http, late)
	st := results.Stats(late)
	if st.Count != users*each+1 || st.P50Ms != 1 || st.MaxMs < 899 || st.MaxMs > 901 || st.MinMs > 0.001 {
		t.Errorf("lateness %+v; want %d samples, p50 1 ms, max 900 ms, min 1 µs", st, users*each+1)
	}
	if all.TotalCount() != 0 {
		t.Errorf("lateness leaked into the requests' latency: %d", all.TotalCount())
	}
	m.interval(all, http, late)
	if late.TotalCount() != 0 {
		t.Errorf("the next interval starts with %d samples", late.TotalCount())
	}
}

// TestGeneratorFullSeconds: which seconds count as full (rules 2 and 3),
// and how the streaks of them run.
func TestGeneratorFullSeconds(t *testing.T) {
	for _, tc := range []struct {
		s                 genSecond
		cpus, machineCPUs int
		cpu, machine      bool
	}{
		{genSecond{cores: 0.96}, 1, 8, true, false},
		{genSecond{cores: 0.9}, 1, 8, false, false},
		{genSecond{cores: 1.9, busy: 0.97, machineKnown: true}, 2, 2, true, true},
		// The machine full, but mostly with someone else's work.
		{genSecond{cores: 0.5, busy: 0.99, machineKnown: true}, 8, 2, false, false},
		{genSecond{cores: 1.2, busy: 0.99, machineKnown: true}, 8, 2, false, true},
		{genSecond{cores: 1.2, busy: 0.99}, 8, 2, false, false}, // /proc/stat not read
	} {
		if got := cpuFull(tc.s, tc.cpus); got != tc.cpu {
			t.Errorf("%+v on %d cores: cpu full %v, want %v", tc.s, tc.cpus, got, tc.cpu)
		}
		if got := machineFull(tc.s, tc.machineCPUs); got != tc.machine {
			t.Errorf("%+v on a %d-CPU machine: machine full %v, want %v", tc.s, tc.machineCPUs, got, tc.machine)
		}
	}
	cur, longest := 0, 0
	for _, full := range []bool{true, true, false, true, true, true, false, true} {
		cur, longest = streak(full, cur, longest)
	}
	if cur != 1 || longest != 3 {
		t.Errorf("streak now %d, longest %d; want 1, 3", cur, longest)
	}
}

// TestGeneratorLagThreshold: generator_lag judges the run's lateness in
// ms, and says how many due times it rests on; a run that was never
// played (a merge) has no generator record and nothing to judge.
func TestGeneratorLagThreshold(t *testing.T) {
	f := newFakeRun(t, &plan.Plan{Target: "http://127.0.0.1:1/mcp", Timeout: plan.Duration(time.Second), Scenarios: []plan.Scenario{{Name: "s", Executor: plan.ExecConstantVUs, VUs: 1,
		Duration: plan.Duration(time.Second), Flow: []plan.Step{{Kind: plan.OpPing}}}},
		Thresholds: []plan.Threshold{
			{Metric: threshold.MetricGeneratorLag, Expression: "p(99)<50"},
			{Metric: threshold.MetricGeneratorLag, Expression: "max<100"},
			{Metric: threshold.MetricGeneratorLag, Expression: "med<=2"},
		}})
	e := f.e
	if got := e.gen.result(0); got != nil {
		t.Errorf("no run played, yet a generator record: %+v", got)
	}
	for i := range 100 {
		d := 2 * time.Millisecond
		if i >= 98 {
			d = 300 * time.Millisecond // p99 is the 99th of 100: late
		}
		e.m.recordLate(e.m.shard(i), d)
	}
	all, http, late := hdrlog.New(), hdrlog.New(), hdrlog.New()
	e.m.interval(all, http, late)
	e.gen.run.Merge(late) // what the monitor's sample does each second
	want := []struct {
		pass     bool
		observed float64
	}{{false, 300}, {false, 300}, {true, 2}}
	for i, th := range e.cp.Thresholds {
		r := results.Judge(e.counts(e.started), th, time.Second)
		if r.Pass != want[i].pass || r.Observed < want[i].observed*0.99 || r.Observed > want[i].observed*1.01 || r.Samples != 100 {
			t.Errorf("%s %s: pass %v observed %v samples %d; want %v, %v, 100", r.Metric, r.Expression, r.Pass, r.Observed, r.Samples, want[i].pass, want[i].observed)
		}
	}
}

// thinkPlan is closed users thinking between pings: every think time's
// end and every ping after it is a due time.
func thinkPlan(users int, think, d time.Duration) *plan.Plan {
	return &plan.Plan{Timeout: plan.Duration(10 * time.Second), Seed: 1, Scenarios: []plan.Scenario{{
		Name: "thinkers", Executor: plan.ExecConstantVUs, VUs: users, Duration: plan.Duration(d), GracefulStop: plan.Duration(5 * time.Second),
		Flow: []plan.Step{{Kind: plan.StepThink, Think: plan.Think{Distribution: plan.ThinkFixed, Duration: plan.Duration(think)}}, {Kind: plan.OpPing}},
	}}}
}

// TestGeneratorKeptUp: a light plan with think times against a local
// server keeps to its schedule: small lateness in load.jsonl and the
// result, the engine's CPU measured, the verdict kept_up.
func TestGeneratorKeptUp(t *testing.T) {
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{})
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// A scrape after the first second sees its generator gauges.
	scraped := make(chan string, 1)
	time.AfterFunc(1500*time.Millisecond, func() { scraped <- scrape(addr) })
	res, err := RunPlan(context.Background(), thinkPlan(10, 20*time.Millisecond, 2500*time.Millisecond),
		RunOptions{Target: srv.URL, RunDir: dir, MetricsAddr: addr})
	if err != nil {
		t.Fatal(err)
	}
	body := <-scraped
	for _, m := range []string{"leakbench_generator_cpus ", "leakbench_generator_cores ", "leakbench_generator_schedule_late_p99_seconds "} {
		if !strings.Contains(body, m) {
			t.Errorf("/metrics lacks %s:\n%s", m, body)
		}
	}
	g := res.Generator
	if g == nil {
		t.Fatal("no generator record")
	}
	// 10 users, a ping every ~20 ms: hundreds of due times (two each:
	// the think's end and the ping after it).
	if g.Verdict != rundir.GeneratorKeptUp || g.Lateness.Count < 200 || g.Lateness.P99Ms >= rundir.GeneratorLagLimitMs {
		t.Errorf("verdict %s %q, lateness %+v; want kept_up, ≥ 200 samples, p99 < 50 ms", g.Verdict, g.Reasons, g.Lateness)
	}
	if g.EngineCPUs < 1 || g.EngineCoresMean <= 0 || g.EngineCoresMax < g.EngineCoresMean*0.5 || g.DroppedIterations != 0 {
		t.Errorf("cpu figures %+v", g)
	}
	if !strings.HasPrefix(g.Line(), "kept up: schedule late by p99 ") {
		t.Errorf("report line %q", g.Line())
	}
	points := readJSONL[rundir.LoadPoint](t, filepath.Join(dir, rundir.LoadFile))
	var samples int64
	for _, p := range points {
		samples += p.LateSamples
		if p.LateSamples > 0 && (p.LateP50Ms > p.LateP99Ms || p.LateP99Ms > p.LateMaxMs) {
			t.Errorf("load.jsonl: lateness out of order: %+v", p)
		}
	}
	if samples != g.Lateness.Count || points[0].EngineCores <= 0 {
		t.Errorf("load.jsonl: %d lateness samples (the result: %d), first second's cores %v", samples, g.Lateness.Count, points[0].EngineCores)
	}
	if runtime.GOOS == "linux" && points[0].MachineBusy <= 0 {
		t.Errorf("load.jsonl: no machine busy share on Linux: %+v", points[0])
	}
}

// scrape is the body of one GET of /metrics at addr (the error's text if
// it fails).
func scrape(addr string) string {
	c := &http.Client{Timeout: 2 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestGeneratorSaturated limits the generator on purpose: one core
// (GOMAXPROCS 1, restored after) shared with goroutines that spin for as
// long as the run lasts, and many users thinking briefly. The schedule
// runs late and the cores are full: the verdict is saturated, and the
// report line says the latency figures include leakbench's own delay.
func TestGeneratorSaturated(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4 s run on a starved core")
	}
	checkLeaks(t)
	srv := mcptest.Start(t, mcptest.Options{})
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const hogs, d = 8, 4 * time.Second
	// Each hog spins until the run is over or a deadline passes, whichever
	// is first: bounded in time whatever the run does.
	stop := make(chan struct{})
	deadline := time.Now().Add(d + 10*time.Second)
	var wg sync.WaitGroup
	for range hogs {
		wg.Go(func() {
			for n := 0; time.Now().Before(deadline); n++ {
				if n%1024 == 0 {
					select {
					case <-stop:
						return
					default:
					}
				}
			}
		})
	}
	res, err := RunPlan(context.Background(), thinkPlan(300, 10*time.Millisecond, d), RunOptions{Target: srv.URL})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	g := res.Generator
	if g == nil {
		t.Fatal("no generator record")
	}
	if g.Verdict != rundir.GeneratorSaturated || g.EngineCPUs != 1 {
		t.Fatalf("verdict %s on %d cores, lateness %+v, busy %d s; want saturated on 1", g.Verdict, g.EngineCPUs, g.Lateness, g.BusySeconds)
	}
	if line := g.Line(); !strings.HasPrefix(line, "saturated: ") || !strings.HasSuffix(line, "latency figures include leakbench's own delay") {
		t.Errorf("report line %q", line)
	}
	t.Logf("%s (lateness %+v, cores mean %.2f max %.2f)", g.Line(), g.Lateness, g.EngineCoresMean, g.EngineCoresMax)
}

// BenchmarkRecordLate is the cost of one lateness record, from as many
// goroutines as there are Ps on the engine's shards: what each think time
// and due request adds to a user's path.
func BenchmarkRecordLate(b *testing.B) {
	m := newMetrics(1, nil)
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		sh := m.shard(int(next.Add(1)))
		for pb.Next() {
			m.recordLate(sh, 1500*time.Microsecond)
		}
	})
}
