package starter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/scenarios/engine"
	"github.com/leakbench/leakbench/scenarios/plan"
	"github.com/leakbench/leakbench/scenarios/scenariofile"
)

// played is what playing a starter file showed.
type played struct {
	res  *rundir.LoadResult
	plan *plan.Plan
}

// playStarter writes res.YAML where a user would, loads it as `leakbench
// run` does (its probe: section too) and plays it with its own flow for a
// short, bounded while (--vus 2 --duration 2s), tokens given as the
// command line would. It fails the test on any failed request or
// threshold.
func playStarter(t *testing.T, yaml []byte, target string, tokens []string) played {
	t.Helper()
	file := filepath.Join(t.TempDir(), "leakbench.yaml")
	if err := WriteFile(file, yaml, false); err != nil {
		t.Fatal(err)
	}
	var probe rundir.ProbeSettings
	p, err := scenariofile.Load(file, scenariofile.Section{Key: "probe", Into: &probe})
	if err != nil {
		t.Fatalf("the starter file does not load: %v\n%s", err, yaml)
	}
	if w := p.Warnings(); len(w) > 0 {
		t.Errorf("the starter file warns: %q", w)
	}
	if probe.Interval != 100*time.Millisecond || probe.StuckAfter != time.Second || probe.Drain <= 0 {
		t.Errorf("probe section read as %+v", probe)
	}
	if err := p.Override(plan.Overrides{VUs: 2, Duration: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := engine.RunPlan(ctx, p, engine.RunOptions{Target: target, Tokens: tokens})
	if err != nil {
		t.Fatalf("play: %v", err)
	}
	if res.Failures != 0 || res.Requests == 0 {
		t.Errorf("played %d requests, %d failed (%v): %q\n%s", res.Requests, res.Failures, res.ErrorsByKind, res.ErrorSamples, yaml)
	}
	for _, th := range res.Thresholds {
		if !th.Pass {
			t.Errorf("threshold %s %s failed", th.Metric, th.Expression)
		}
	}
	return played{res: res, plan: p}
}

// writeDebug keeps the file for a failing test's reader.
func writeDebug(t *testing.T, name string, yaml []byte) {
	if t.Failed() {
		_ = os.WriteFile(filepath.Join(os.TempDir(), name), yaml, 0o644)
		t.Logf("the starter file is in %s", filepath.Join(os.TempDir(), name))
	}
}

// branchOn reports whether the file has an active (not commented out)
// tools/call of name.
func branchOn(yaml []byte, name string) bool {
	return strings.Contains(string(yaml), "\n                  name: \""+name+"\"\n")
}
