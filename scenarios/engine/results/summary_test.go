package results

import (
	"math"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine/hdrlog"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// hist is a histogram of the given milliseconds.
func hist(t *testing.T, ms ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrlog.New()
	for _, v := range ms {
		if err := h.RecordValue(v * 1000); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// twoScenarios are counts of a 10 s run of scenarios a and b, built by
// hand: a called tools/call echo (4 requests, 1 failed as a timeout) and
// an http step (2 answered 200, 1 answered 500); b pinged (2 requests).
func twoScenarios(t *testing.T, thresholds ...plan.Threshold) *Counts {
	t.Helper()
	flow := []plan.Step{{Kind: plan.OpPing}}
	cp, err := plan.Compile(&plan.Plan{Target: "http://127.0.0.1:1/mcp", Timeout: plan.Duration(5 * time.Second), Seed: 1,
		Scenarios: []plan.Scenario{
			{Name: "a", Executor: plan.ExecConstantVUs, VUs: 3, Duration: plan.Duration(10 * time.Second), Flow: flow},
			{Name: "b", Executor: plan.ExecConstantVUs, VUs: 2, Duration: plan.Duration(8 * time.Second), Flow: flow},
		},
		Thresholds: thresholds})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	st := &rundir.SeriesState{Started: t0, Ended: t0.Add(10 * time.Second), EndReason: EndCompleted, PeakUsers: 5,
		Series: []rundir.SeriesCounts{
			{Scenario: "a", Method: "tools/call", Name: "echo", Requests: 4, Failed: 1, Kinds: map[string]int64{"timeout": 1}},
			{Scenario: "a", Method: MethodHTTP, Name: "GET /health", Status: 200, Requests: 2},
			{Scenario: "a", Method: MethodHTTP, Name: "GET /health", Status: 500, Requests: 1, Failed: 1},
			{Scenario: "a", Method: MethodIteration, Requests: 4},
			{Scenario: "b", Method: "ping", Requests: 2},
		},
		Scenarios: []rundir.ScenarioCounts{
			{Name: "a", Requests: 7, Failures: 2, Iterations: 4, Kinds: map[string]int64{"timeout": 1, "http": 1}, PeakUsers: 3,
				Protocol: map[string]int64{"2026-07-28": 3}},
			{Name: "b", Requests: 2, Iterations: 2, DroppedIterations: 1, PeakUsers: 2, Reinits: 1,
				Protocol: map[string]int64{"2026-07-28": 1, "2025-06-18": 1}},
		},
	}
	return &Counts{Plan: cp, State: st, Hists: []*hdrhistogram.Histogram{
		hist(t, 10, 20, 30, 400), hist(t, 5, 5), hist(t, 50), hist(t, 100, 100, 100, 500), hist(t, 1, 3),
	}}
}

// TestSummarize: the Result of hand-built counts — the counters summed
// over the scenarios, each error kind, the latency by method, by tool and
// in all (requests only: not iterations, not http steps), each scenario's
// own, the iterations' durations, the http steps by name with their
// statuses, the protocols summed, the plan's summary, and every
// threshold judged.
func TestSummarize(t *testing.T) {
	c := twoScenarios(t, plan.Threshold{Metric: "mcp_req_duration", Expression: "p(95)<500"},
		plan.Threshold{Metric: "mcp_req_failed{scenario:a}", Expression: "rate<0.1"})
	r := Summarize(c)
	if r.Requests != 9 || r.Failures != 2 || r.Iterations != 6 || r.DroppedIterations != 1 || r.Reinits != 1 || r.PeakUsers != 5 ||
		r.EndReason != EndCompleted || r.Interrupted {
		t.Errorf("totals: requests %d failures %d iterations %d dropped %d reinits %d peak %d end %q",
			r.Requests, r.Failures, r.Iterations, r.DroppedIterations, r.Reinits, r.PeakUsers, r.EndReason)
	}
	if r.ErrorsByKind["timeout"] != 1 || r.ErrorsByKind["http"] != 1 || r.ErrorsByKind["conn_refused"] != 0 {
		t.Errorf("errors by kind %v", r.ErrorsByKind)
	}
	if _, ok := r.ErrorsByKind["conn_refused"]; !ok {
		t.Errorf("errors by kind %v: every kind is listed, zero or not", r.ErrorsByKind)
	}
	lat := r.Latency
	if lat[rundir.OpAll].Count != 6 || lat["tools/call"].Count != 4 || lat["tools/call:echo"].Count != 4 || lat["ping"].Count != 2 {
		t.Errorf("latency counts: all %d, tools/call %d, tools/call:echo %d, ping %d; want 6, 4, 4, 2 (no iterations, no http)",
			lat[rundir.OpAll].Count, lat["tools/call"].Count, lat["tools/call:echo"].Count, lat["ping"].Count)
	}
	// Within HDR's 3 significant digits.
	if m := lat["tools/call"]; m.MinMs != 10 || math.Abs(m.MaxMs-400) > 0.5 || math.Abs(m.P50Ms-20) > 0.05 {
		t.Errorf("tools/call latency %+v, want min 10, median 20, max 400 ms", m)
	}
	if a, b := r.Scenarios["a"], r.Scenarios["b"]; a.Latency[rundir.OpAll].Count != 4 || b.Latency[rundir.OpAll].Count != 2 ||
		a.Requests != 7 || b.DroppedIterations != 1 || a.ErrorsByKind["timeout"] != 1 || b.ErrorsByKind["timeout"] != 0 || a.Executor != plan.ExecConstantVUs {
		t.Errorf("scenarios: a %+v, b %+v", a, b)
	}
	if it := r.IterationDuration; it.Count != 4 || it.MaxMs < 499 || it.MaxMs > 501 {
		t.Errorf("iteration duration %+v, want 4 of them, max 500 ms", it)
	}
	h, ok := r.HTTP["GET /health"]
	if !ok || len(r.HTTP) != 1 || h.Requests != 3 || h.Failures != 1 || h.Statuses["200"] != 2 || h.Statuses["500"] != 1 || h.Latency.Count != 3 {
		t.Errorf("http %+v, want GET /health: 3 requests, 1 failed, 200×2 and 500×1, 3 timed", r.HTTP)
	}
	if r.Protocol["2026-07-28"] != 4 || r.Protocol["2025-06-18"] != 1 || r.Scenarios["b"].Protocol["2025-06-18"] != 1 {
		t.Errorf("protocols: run %v, b %v", r.Protocol, r.Scenarios["b"].Protocol)
	}
	if cfg := r.Config; cfg.Users != 5 || cfg.Duration != 10*time.Second || cfg.RequestTimeout != 5*time.Second || cfg.Target != "http://127.0.0.1:1/mcp" {
		t.Errorf("config %+v, want 5 users, 10 s, 5 s timeout, the target", cfg)
	}
	if len(r.Thresholds) != 2 {
		t.Fatalf("thresholds %+v, want both judged", r.Thresholds)
	}
	// p(95) of 10, 20, 30, 400, 1, 3 ms is 400 ms: under 500. The http
	// step's 5, 5 and 50 ms are http_req_duration's, not this metric's.
	if th := r.Thresholds[0]; !th.Pass || th.Samples != 6 || math.Abs(th.Observed-400) > 1 {
		t.Errorf("p(95)<500: %+v, want pass with 400 ms observed over the 6 MCP requests", th)
	}
	// Scenario a's MCP requests: 1 failed of 4.
	if th := r.Thresholds[1]; th.Pass || th.Observed != 0.25 || th.Samples != 4 {
		t.Errorf("rate<0.1 for a: %+v, want fail with 0.25 over 4", th)
	}
}
