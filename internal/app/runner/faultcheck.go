package runner

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/faults"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// recoverySection is a profile's recovery section: thresholds on the
// faults' recovery, judged with the run's own thresholds.
type recoverySection struct {
	RecoverySeconds []string `yaml:"recovery_seconds"` // e.g. ["max<10"]
}

// checkFaults checks p's faults timeline and recovery thresholds against
// its plan before anything starts; errors name the file and line.
func checkFaults(filename string, pl *plan.Plan, p Profile) error {
	var msgs []string
	if len(p.Faults) > 0 {
		for _, pr := range faults.Validate(p.Faults, loadLength(pl)) {
			msgs = append(msgs, fmt.Sprintf("%s:%d: faults[%d]: %s", filename, pr.Line, pr.Index, pr.Msg))
		}
	}
	for _, t := range p.RecoverySeconds {
		if _, err := faults.ParseRecoveryThreshold(t); err != nil {
			msgs = append(msgs, fmt.Sprintf("%s: recovery.recovery_seconds: %v", filename, err))
		}
	}
	if len(p.RecoverySeconds) > 0 && len(p.Faults) == 0 {
		msgs = append(msgs, fmt.Sprintf("%s: recovery.recovery_seconds: thresholds on recovery need a faults: timeline", filename))
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%w: %s", plan.ErrInvalidPlan, strings.Join(msgs, "\n"))
	}
	return nil
}

// loadLength is how long the plan's load runs: its last scenario's end
// (0 when it cannot be told).
func loadLength(pl *plan.Plan) time.Duration {
	c, err := plan.Compile(pl)
	if err != nil {
		return 0
	}
	var end time.Duration
	for _, s := range c.Scenarios {
		end = max(end, s.StartTime.D()+s.Length)
	}
	return end
}

// judgeRecovery judges the recovery thresholds on the faults' recovery
// times; a fault that never recovered counts as the time from its removal
// to now and fails every threshold.
func judgeRecovery(exprs []string, recs []rundir.FaultRecord, now time.Time) []rundir.Threshold {
	var vals []float64
	allRecovered := true
	for _, r := range recs {
		switch {
		case r.RecoverySeconds != nil:
			vals = append(vals, *r.RecoverySeconds)
		case r.Removed != nil:
			vals = append(vals, now.Sub(*r.Removed).Seconds())
			allRecovered = false
		}
	}
	var out []rundir.Threshold
	for _, e := range exprs {
		t, err := faults.ParseRecoveryThreshold(e)
		if err != nil {
			continue // checked when the profile was read
		}
		obs := math.NaN()
		if len(vals) > 0 {
			obs = t.Observe(vals)
		}
		out = append(out, rundir.Threshold{Metric: "recovery_seconds", Expression: e, Observed: obs,
			Pass: len(vals) > 0 && allRecovered && t.Holds(obs), Samples: int64(len(vals))})
	}
	return out
}
