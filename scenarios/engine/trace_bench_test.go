//go:build linux

package engine

import (
	"context"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/procstat"
	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// BenchmarkEnginePeakRate: the engine's peak tools/call rate against a
// trivial endpoint in a child process, 50 users back to back for 3 s, with
// a run directory (load.jsonl, and requests.jsonl where the engine writes
// one), and the engine's CPU per request. Run it on two builds to compare
// what the per-request trace context and request index cost.
func BenchmarkEnginePeakRate(b *testing.B) {
	const conns, d = 50, 3 * time.Second
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	for b.Loop() {
		p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Scenarios: []plan.Scenario{{
			Name: "calls", Executor: plan.ExecConstantVUs, VUs: conns, Duration: plan.Duration(d), GracefulStop: plan.Duration(time.Second),
			Flow: []plan.Step{{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "hello"}}},
		}}}
		c0 := procstat.Self()
		res, err := RunPlan(context.Background(), p, RunOptions{Target: h.URL, RunDir: b.TempDir()})
		c1 := procstat.Self()
		if err != nil || res.Failures != 0 {
			b.Fatalf("%v; %d failures: %q", err, res.Failures, res.ErrorSamples)
		}
		b.ReportMetric(float64(res.Requests)/d.Seconds(), "req/s")
		b.ReportMetric(float64((c1-c0).Microseconds())/float64(res.Requests), "cpu-µs/req")
	}
}
