package engine

import (
	"github.com/leakbench/leakbench/internal/lib/redact"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// configOf sums up a compiled plan.
func configOf(cp *plan.Compiled) rundir.PlanSummary {
	c := rundir.PlanSummary{Target: redact.URL(cp.Plan.Target), RequestTimeout: cp.Plan.Timeout.D()}
	for _, s := range cp.Scenarios {
		c.Users += s.Users
		c.Duration = max(c.Duration, s.StartTime.D()+s.Length)
	}
	return c
}
