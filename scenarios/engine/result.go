package engine

import (
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// The engine's results are the run directory's records (package rundir
// owns summary.json's formats); these names are the engine's view of them.
type (
	// Result is what a run measured: a plain value that serializes to
	// JSON, with no secret in it.
	Result = rundir.LoadResult
	// ScenarioResult is one scenario's share of a Result.
	ScenarioResult = rundir.ScenarioResult
	// LatencyStats summarizes one latency histogram, in milliseconds.
	LatencyStats = rundir.LatencyStats
	// ThresholdResult is the verdict of one threshold.
	ThresholdResult = rundir.Threshold
	// Config sums up what a run was set to play.
	Config = rundir.PlanSummary
)

// OpAll is the key of Result.Latency over every method.
const OpAll = rundir.OpAll

// configOf sums up a compiled plan.
func configOf(cp *plan.Compiled) Config {
	c := Config{Target: redact.URL(cp.Plan.Target), RequestTimeout: cp.Plan.Timeout.D()}
	for _, s := range cp.Scenarios {
		c.Users += s.Users
		c.Duration = max(c.Duration, s.StartTime.D()+s.Length)
	}
	return c
}
