package runner

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports/table"
	"github.com/leakbench/leakbench/scenarios/profiles"
)

var updateScenarioLines = flag.Bool("update-scenario-lines", false, "rewrite testdata/scenario-line-*.txt")

// TestScenarioLineOfProfiles: the report's scenario line of a run of each
// built-in profile says what the plan plays (it once said "0 users for
// 0s" for every plan-based run). It lives here, not in reports, because
// the built-in profiles are the runner's: a library's tests do not import
// the application layer (internal/testing/layers).
func TestScenarioLineOfProfiles(t *testing.T) {
	for _, name := range []string{"ci", "incident"} {
		p, err := profiles.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		recorded, err := json.Marshal(p.Plan)
		if err != nil {
			t.Fatal(err)
		}
		s := &rundir.Summary{Load: &rundir.LoadResult{Plan: recorded}}
		got := []byte(table.Scenario(s) + "\n")
		path := filepath.Join("testdata", "scenario-line-"+name+".txt")
		if *updateScenarioLines {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %q, want %q (go test -run TestScenarioLineOfProfiles -update-scenario-lines rewrites it)", name, got, want)
		}
	}
}
