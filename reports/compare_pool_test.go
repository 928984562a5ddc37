package reports

import (
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
)

// TestCompareReadsPinnedPool: a leak that holds connections without a
// transaction (held-while-waiting) passes the "before reproduces" check on
// the service pool's evidence, and then the after run must free the pool.
func TestCompareReadsPinnedPool(t *testing.T) {
	run := func(p rundir.ProbeSummary) *rundir.Summary {
		return &rundir.Summary{EndReason: rundir.EndCompleted, Probe: &p, Load: &rundir.LoadResult{}}
	}
	pinned := rundir.ProbeSummary{AppPoolSampled: true, AppPoolSaturatedSeconds: 8, AppPoolAcquireWaits: 60, AppPoolMax: 6, AppPoolMaxAcquired: 6}
	freed := rundir.ProbeSummary{AppPoolSampled: true, AppPoolSaturatedSeconds: 0.5, AppPoolMax: 6}
	tests := []struct {
		name          string
		before, after rundir.ProbeSummary
		pass          bool
	}{
		{"pinned then freed", pinned, freed, true},
		{"pinned in both", pinned, pinned, false},
		{"nothing in before", freed, freed, false},
		{"pinned without waits is no evidence", rundir.ProbeSummary{AppPoolSampled: true, AppPoolSaturatedSeconds: 8}, freed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(run(tt.before), run(tt.after), "b", "a")
			if c.Pass != tt.pass {
				t.Fatalf("pass = %v, want %v; checks %+v", c.Pass, tt.pass, c.Checks)
			}
		})
	}
}
