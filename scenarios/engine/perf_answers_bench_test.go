//go:build linux

package engine

import (
	"context"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/testing/mcptest"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// BenchmarkEngineAnswers measures what captures and checks on every
// request cost the engine's peak tools/call rate: the same plan as
// BenchmarkEngineVsWrk (50 users back to back against the canned
// endpoint, in a child process), plain and with a capture and two checks
// on each answer, side by side (rounds alternating, 3 s each).
//
//	go test -run '^$' -bench EngineAnswers -benchtime 1x ./scenarios/engine
func BenchmarkEngineAnswers(b *testing.B) {
	const conns, d = 50, 3 * time.Second
	h := mcptest.StartHelper(b, mcptest.HelperCanned)
	rate := func(judged bool) float64 {
		step := plan.Step{Kind: plan.OpCallTool, Name: "echo", Arguments: map[string]any{"text": "hello"}}
		if judged {
			step.Captures = []plan.Capture{{Name: "text", Path: "content.0.text"}}
			step.Checks = []plan.Check{{Path: "content.0.text", Op: plan.CheckEquals, Value: "hello"}, {Path: "isError", Op: plan.CheckEquals, Value: false}}
		}
		p := &plan.Plan{Timeout: plan.Duration(10 * time.Second), Scenarios: []plan.Scenario{{
			Name: "calls", Executor: plan.ExecConstantVUs, VUs: conns, Duration: plan.Duration(d), GracefulStop: plan.Duration(time.Second),
			Flow: []plan.Step{step},
		}}}
		res, err := RunPlan(context.Background(), p, RunOptions{Target: h.URL})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failures != 0 {
			b.Fatalf("%d failures: %q", res.Failures, res.ErrorSamples)
		}
		if judged && (len(res.Checks) != 2 || res.Checks[0].Fails != 0 || res.Checks[0].Passes == 0) {
			b.Fatalf("checks: %+v", res.Checks)
		}
		return float64(res.Latency[plan.OpCallTool].Count) / d.Seconds()
	}
	for b.Loop() {
		var plain, judged float64
		const rounds = 4
		for round := range rounds {
			if round%2 == 0 {
				plain += rate(false) / rounds
				judged += rate(true) / rounds
			} else {
				judged += rate(true) / rounds
				plain += rate(false) / rounds
			}
		}
		b.ReportMetric(plain, "plain-req/s")
		b.ReportMetric(judged, "judged-req/s")
		b.ReportMetric(1-judged/plain, "cost")
	}
}
