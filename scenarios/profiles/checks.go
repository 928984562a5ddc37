package profiles

import (
	"fmt"
	"strings"
	"time"

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
		for _, pr := range faults.Validate(p.Faults, LoadLength(pl)) {
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

// LoadLength is how long the plan's load runs: its last scenario's end
// (0 when it cannot be told).
func LoadLength(pl *plan.Plan) time.Duration {
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
