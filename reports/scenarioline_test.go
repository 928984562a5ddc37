package reports_test

import (
	"encoding/json"
	"testing"

	"github.com/leakbench/leakbench/internal/app/runner"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
)

// TestScenarioLineOfProfiles: the report's scenario line of a run of each
// built-in profile says what the plan plays (it once said "0 users for
// 0s" for every plan-based run).
func TestScenarioLineOfProfiles(t *testing.T) {
	for _, name := range []string{"ci", "incident"} {
		p, err := runner.LookupProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		recorded, err := json.Marshal(p.Plan)
		if err != nil {
			t.Fatal(err)
		}
		s := &reports.Summary{Load: &rundir.LoadResult{Plan: recorded}}
		reports.Golden(t, "scenario-line-"+name+".txt", []byte(reports.ScenarioText(s)+"\n"))
	}
}
