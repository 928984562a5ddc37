package render

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leakbench/leakbench/internal/app/history"
	"github.com/leakbench/leakbench/internal/lib/rundir"
	"github.com/leakbench/leakbench/reports"
	"github.com/leakbench/leakbench/reports/verdict"
)

// recorded is the reports package's recorded sign-off: before the leaky
// gateway (200 sessions leaked), after the fixed one, 60 users for 20 s.
var recorded = filepath.Join("..", "..", "..", "reports", "testdata", "signoff")

// copyRun copies a recorded run into a fresh directory.
func copyRun(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(recorded, name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// editSummary rewrites a run's summary.json through a generic map.
func editSummary(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, rundir.SummaryFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if raw, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCompareModeOnRecordedRuns(t *testing.T) {
	leaky, fixed, fixed2 := copyRun(t, "before"), copyRun(t, "after"), copyRun(t, "after")
	for _, tt := range []struct {
		name          string
		mode          verdict.Mode
		before, after string
		pass          bool
		failed        []string
	}{
		{"fix: leaky then fixed passes", verdict.ModeFix, leaky, fixed, true, nil},
		{"fix: fixed then leaky fails", verdict.ModeFix, fixed, leaky, false, []string{"before reproduces the leak", "after leaks no session"}},
		{"regression: fixed then fixed passes", verdict.ModeRegression, fixed, fixed2, true, nil},
		{"regression: fixed then leaky fails naming what regressed", verdict.ModeRegression, fixed, leaky, false,
			[]string{"after leaks no session where before leaked none", "Connection release p99 not worse than before", "Stuck idle in transaction (max at one instant) not worse than before"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			cmp, err := CompareMode(out, tt.before, tt.after, CompareOptions{Mode: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			if cmp.Pass != tt.pass {
				t.Errorf("pass %v, want %v: %+v", cmp.Pass, tt.pass, cmp.Checks)
			}
			failed := strings.Join(cmp.FailedChecks(), "\n")
			for _, want := range tt.failed {
				if !strings.Contains(failed, want) {
					t.Errorf("failed checks %q lack %q", failed, want)
				}
			}
			var back reports.Comparison
			raw, err := os.ReadFile(filepath.Join(out, rundir.CompareFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &back); err != nil || back.Mode != tt.mode {
				t.Errorf("compare.json: mode %q (%v), want %q", back.Mode, err, tt.mode)
			}
			if tt.mode == verdict.ModeRegression && len(back.Deltas) == 0 {
				t.Error("compare.json of a regression verdict has no deltas")
			}
		})
	}
	if _, err := CompareMode(t.TempDir(), fixed, fixed2, CompareOptions{}); !errors.Is(err, verdict.ErrMode) {
		t.Errorf("no mode: %v, want ErrMode", err)
	}
}

// TestRegressionRuleLoosens: --regression-rule moves the noise floor; a
// latency p95 that regressed under the default passes a rule that
// allows it.
func TestRegressionRuleLoosens(t *testing.T) {
	fixed, slower := copyRun(t, "after"), copyRun(t, "after")
	editSummary(t, slower, func(m map[string]any) {
		all := m["load"].(map[string]any)["latency"].(map[string]any)["all"].(map[string]any)
		all["p95_ms"] = all["p95_ms"].(float64) + 3000
	})
	cmp, err := CompareMode(t.TempDir(), fixed, slower, CompareOptions{Mode: verdict.ModeRegression})
	if err != nil || cmp.Pass {
		t.Fatalf("p95 3 s slower: %v, pass %v", err, cmp != nil && cmp.Pass)
	}
	if got := cmp.FailedChecks(); len(got) != 1 || got[0] != "Request latency p95 not worse than before" {
		t.Errorf("failed checks %q", got)
	}
	rules := history.DefaultRules()
	if err := history.SetRule(rules, "latency_p95_ms=10:5000"); err != nil {
		t.Fatal(err)
	}
	if cmp, err = CompareMode(t.TempDir(), fixed, slower, CompareOptions{Mode: verdict.ModeRegression, Rules: rules}); err != nil || !cmp.Pass {
		t.Errorf("with latency_p95_ms=10:5000: %v, pass %v: %+v", err, cmp != nil && cmp.Pass, cmp.Checks)
	}
}

func TestOpenBaseline(t *testing.T) {
	fixed, leaky := copyRun(t, "after"), copyRun(t, "before")
	want := Scenario{Profile: "ci", Users: 60, Duration: 20 * time.Second}

	b, err := OpenBaseline(fixed, want, false)
	if err != nil || b.Dir != fixed || len(b.Notes) != 0 {
		t.Fatalf("the same scenario: %+v, %v", b, err)
	}
	for _, tt := range []struct {
		name, ref string
		want      Scenario
		err       string
	}{
		{"missing", filepath.Join(t.TempDir(), "nothing"), want, "no such file"},
		{"not a run", t.TempDir(), want, "not a run directory (no summary.json) nor a history directory"},
		{"other users", fixed, Scenario{Profile: "ci", Users: 30, Duration: 20 * time.Second}, "users differ: baseline 60, this run 30"},
		{"other duration", fixed, Scenario{Profile: "ci", Users: 60, Duration: time.Minute}, "duration differs: baseline 20s, this run 1m0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenBaseline(tt.ref, tt.want, false)
			if !errors.Is(err, ErrBaseline) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("OpenBaseline: %v, want ErrBaseline saying %q", err, tt.err)
			}
		})
	}
	// Force takes another scenario, saying what differs.
	b, err = OpenBaseline(fixed, Scenario{Profile: "mine", Users: 30, Duration: 20 * time.Second}, true)
	if err != nil || !strings.Contains(strings.Join(b.Notes, "; "), "users differ") || !strings.Contains(strings.Join(b.Notes, "; "), `profile differs: baseline "ci", this run "mine"`) {
		t.Errorf("forced: %+v, %v", b, err)
	}

	// run --baseline: fixed → leaky regresses, fixed → fixed does not.
	b, err = OpenBaseline(fixed, want, false)
	if err != nil {
		t.Fatal(err)
	}
	cmp, info, err := JudgeBaseline(leaky, b, BaselineOptions{})
	if err != nil || cmp.Pass || !info.Regressed {
		t.Fatalf("fixed baseline, leaky run: %v, pass %v", err, cmp != nil && cmp.Pass)
	}
	if _, err := os.Stat(filepath.Join(leaky, BaselineDirName, rundir.ReportFile)); err != nil {
		t.Error(err)
	}
	cmp, _, err = JudgeBaseline(copyRun(t, "after"), b, BaselineOptions{})
	if err != nil || !cmp.Pass {
		t.Errorf("fixed baseline, fixed run: %v, pass %v: %+v", err, cmp != nil && cmp.Pass, cmp.Checks)
	}
}

// TestOpenBaselineFromHistory: a history directory stands for its newest
// passing entry of the same scenario, read from the entry's summary when
// its run directory is gone.
func TestOpenBaselineFromHistory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "history")
	st, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Scenario{Profile: "ci", Users: 60, Duration: 20 * time.Second}
	if _, err := OpenBaseline(dir, want, false); !errors.Is(err, ErrBaseline) || !strings.Contains(err.Error(), "no passing entry yet") {
		t.Errorf("empty history: %v", err)
	}
	fixed := copyRun(t, "after")
	raw, err := os.ReadFile(filepath.Join(fixed, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	e, err := history.NewEntry(history.KindRun, raw)
	if err != nil {
		t.Fatal(err)
	}
	e.Pass, e.VerdictPass, e.RunDir = true, true, filepath.Join(t.TempDir(), "gone")
	id, err := st.Append(e)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenBaseline(dir, want, false)
	if err != nil || b.Entry == nil || b.Entry.ID != id || b.Dir != "" {
		t.Fatalf("history baseline: %+v, %v", b, err)
	}
	if _, err := OpenBaseline(dir, Scenario{Profile: "ci", Users: 5, Duration: 20 * time.Second}, false); !errors.Is(err, ErrBaseline) || !strings.Contains(err.Error(), "users differ") {
		t.Errorf("history of another scenario: %v", err)
	}
	leaky := copyRun(t, "before")
	cmp, info, err := JudgeBaseline(leaky, b, BaselineOptions{})
	if err != nil || cmp.Pass || info.ID != id {
		t.Fatalf("history baseline, leaky run: %v, pass %v, info %+v", err, cmp != nil && cmp.Pass, info)
	}
}

func TestScenarioDifferences(t *testing.T) {
	run := Scenario{Executors: []string{"agents (constant-vus)"}, Users: 10, Duration: time.Minute}
	for _, tt := range []struct {
		name string
		base Scenario
		want string
	}{
		{"same", run, ""},
		{"executor", Scenario{Executors: []string{"agents (ramping-vus)"}, Users: 10, Duration: time.Minute},
			"executors differ: baseline agents (ramping-vus), this run agents (constant-vus)"},
		{"all three", Scenario{Executors: []string{"a (constant-arrival-rate)"}, Users: 5, Duration: time.Second},
			"executors differ: baseline a (constant-arrival-rate), this run agents (constant-vus); users differ: baseline 5, this run 10; duration differs: baseline 1s, this run 1m0s"},
	} {
		if got := strings.Join(run.Differences(tt.base), "; "); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
